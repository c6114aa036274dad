package proxy

import (
	"time"

	"github.com/dpproxy/dpproxy/metrics"
	"github.com/dpproxy/dpproxy/parser"
)

// frontend names the session's front door for metrics.
func (s *Session) frontend() string {
	if s.dialect == parser.PostgreSQL {
		return metrics.FrontendPostgres
	}
	return metrics.FrontendMySQL
}

// statementKind is the metrics kind of a statement; a SELECT's kind is set
// by the path that answers it (s.kind).
func statementKind(st parser.Statement) string {
	switch st.(type) {
	case *parser.Select:
		return metrics.KindCatalog
	case *parser.Show:
		return metrics.KindCatalog
	case *parser.ShowPrivacyBudget, *parser.SetPrivacyBudget, *parser.ResetPrivacyBudget, *parser.ShowPrivacyLedger, *parser.ExplainPrivacy:
		return metrics.KindAdmin
	}
	return metrics.KindSession
}

// observe records one statement's outcome and latency.
func (s *Session) observe(kind string, start time.Time, err error) {
	m := s.engine.metrics
	fe := s.frontend()
	if err != nil {
		if pe, ok := err.(*Error); ok {
			m.Refused(fe, refusalReason(pe.Code))
		} else {
			m.Refused(fe, metrics.Other)
		}
		return
	}
	m.Answered(fe, kind)
	m.Observe(fe, kind, time.Since(start))
}

// refusalReason maps an error code onto the bounded set of metric reasons.
func refusalReason(c Code) string {
	switch c {
	case CodeRefused:
		return metrics.ReasonRowLevel
	case CodeBudget:
		return metrics.ReasonBudget
	case CodeSyntax:
		return metrics.ReasonSyntax
	case CodeUnsupported:
		return metrics.ReasonUnsupported
	case CodeUnknownTable, CodeUnknownColumn, CodeUnknownDB:
		return metrics.ReasonUnknownTable
	case CodePermission, CodeAuth:
		return metrics.ReasonPermission
	case CodeBackend:
		return metrics.ReasonBackend
	case CodeTimeout, CodeCanceled:
		return metrics.ReasonTimeout
	}
	return metrics.Other
}
