// Package server wires one running dpproxy from a policy: the backend pool,
// the ledger, the engine, the front doors and the admin listener. `dpproxy
// serve` and `dpproxy demo` both start one.
package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/dpproxy/dpproxy/admin"
	"github.com/dpproxy/dpproxy/backend"
	"github.com/dpproxy/dpproxy/ledger"
	"github.com/dpproxy/dpproxy/ledger/etcdledger"
	"github.com/dpproxy/dpproxy/metrics"
	"github.com/dpproxy/dpproxy/parser"
	"github.com/dpproxy/dpproxy/policy"
	"github.com/dpproxy/dpproxy/proxy"
	"github.com/dpproxy/dpproxy/proxy/admission"
	"github.com/dpproxy/dpproxy/proxy/mysqlwire"
	"github.com/dpproxy/dpproxy/proxy/pgwire"
)

// Options start a server.
type Options struct {
	Policy *policy.Policy
	Logger *slog.Logger
	// Database is the database name clients see (default: the backend's).
	Database string
}

// Server is a running dpproxy.
type Server struct {
	Engine  *proxy.Engine
	Metrics *metrics.Metrics
	// Admission is what both front doors share: connection slots, the
	// unauthenticated cap and deadline, the failed-login throttle.
	Admission *admission.Admission
	backend   *backend.Backend
	ledger    ledger.Store
	mysql     *mysqlwire.Server
	pg        *pgwire.Server
	admin     *admin.Server
	log       *slog.Logger
	wg        sync.WaitGroup
	errs      chan error
}

// OpenLedger opens the ledger the policy names: etcd when ledger.etcd lists
// endpoints (fleets), the Badger directory ledger.path otherwise.
func OpenLedger(ctx context.Context, pol *policy.Policy, log *slog.Logger) (ledger.Store, error) {
	// Each branch returns a nil Store on error, never a typed nil pointer.
	if e := pol.Ledger.Etcd; e != nil && len(e.Endpoints) > 0 {
		l, err := etcdledger.Open(ctx, etcdledger.Config{Endpoints: e.Endpoints, Prefix: e.Prefix, Logger: log})
		if err != nil {
			return nil, err
		}
		return l, nil
	}
	if pol.Ledger.Path == "" {
		return nil, errors.New("server: the policy names no ledger: set ledger.path (or ledger.etcd.endpoints)")
	}
	l, err := ledger.Open(pol.Ledger.Path, ledger.Options{Logger: log})
	if err != nil {
		return nil, err
	}
	return l, nil
}

// Start opens everything the policy names and starts listening. On error,
// whatever was opened is closed again.
func Start(ctx context.Context, opts Options) (_ *Server, err error) {
	pol := opts.Policy
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	s := &Server{log: log, errs: make(chan error, 3), Metrics: metrics.New()}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	openCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if s.backend, err = backend.Open(openCtx, pol.Backend.Driver, pol.Backend.DSN, pol.Backend.MaxOpenConns); err != nil {
		return nil, err
	}
	if s.ledger, err = OpenLedger(openCtx, pol, log); err != nil {
		return nil, err
	}
	if s.Engine, err = proxy.New(openCtx, proxy.Config{
		Policy: pol, Backend: s.backend, Ledger: s.ledger, Logger: log, Database: opts.Database, Metrics: s.Metrics,
	}); err != nil {
		return nil, err
	}
	var tlsConfig *tls.Config
	if pol.TLS != nil {
		cert, err := tls.LoadX509KeyPair(pol.TLS.Cert, pol.TLS.Key)
		if err != nil {
			return nil, fmt.Errorf("server: loading the TLS certificate %s: %w", pol.TLS.Cert, err)
		}
		tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	eng := s.Engine
	// One Admission for both doors: limits.max_connections is one number
	// for the proxy, not one per protocol, and an attacker who fills one
	// door's handshakes must not also get the other's.
	lim := pol.Limits
	s.Admission = admission.New(admission.Config{
		MaxConnections:     lim.MaxConnections,
		MaxUnauthenticated: lim.MaxUnauthenticated,
		HandshakeTimeout:   lim.HandshakeTimeout.Duration,
		MaxFailedLogins:    lim.MaxFailedLogins,
		Logger:             log,
	})
	if pol.Listen.MySQL != "" {
		s.mysql, err = mysqlwire.Listen(mysqlwire.Config{
			Addr:       pol.Listen.MySQL,
			LookupUser: eng.LookupUser,
			Open: func(ctx context.Context, user, db string) (mysqlwire.Session, error) {
				s, err := eng.NewSession(ctx, user, db, parser.MySQL)
				if err != nil {
					return nil, err // not a typed nil *proxy.Session
				}
				return s, nil
			},
			ServerVersion:     eng.ServerVersion(),
			TLS:               tlsConfig,
			Admission:         s.Admission,
			MaxStatementBytes: lim.MaxStatementBytes,
			IdleTimeout:       lim.IdleTimeout.Duration,
			QueryTimeout:      lim.QueryTimeout.Duration,
			Logger:            log,
		})
		if err != nil {
			return nil, fmt.Errorf("server: listening for MySQL clients on %s: %w", pol.Listen.MySQL, err)
		}
		s.serve("MySQL front door", s.mysql.Serve)
		log.Info("listening for MySQL clients", "addr", s.mysql.Addr())
	}
	if pol.Listen.Postgres != "" {
		s.pg, err = pgwire.Listen(pgwire.Config{
			Addr:       pol.Listen.Postgres,
			LookupUser: eng.LookupUser,
			Open: func(ctx context.Context, user, db string, params map[string]string) (pgwire.Session, error) {
				s, err := eng.NewPGSession(ctx, user, db, params)
				if err != nil {
					return nil, err
				}
				return s, nil
			},
			ServerVersion:   proxy.PostgresVersion,
			TLS:             tlsConfig,
			Admission:       s.Admission,
			MaxMessageBytes: maxMessageBytes(lim.MaxStatementBytes),
			IdleTimeout:     lim.IdleTimeout.Duration,
			QueryTimeout:    lim.QueryTimeout.Duration,
			Logger:          log,
		})
		if err != nil {
			return nil, fmt.Errorf("server: listening for PostgreSQL clients on %s: %w", pol.Listen.Postgres, err)
		}
		s.serve("PostgreSQL front door", s.pg.Serve)
		log.Info("listening for PostgreSQL clients", "addr", s.pg.Addr())
	}
	if pol.Listen.Admin != "" {
		s.admin, err = admin.Listen(admin.Config{
			Addr: pol.Listen.Admin, Metrics: s.Metrics, Logger: log,
			Source: &budgetSource{pol: pol, ledger: s.ledger},
		})
		if err != nil {
			return nil, fmt.Errorf("server: listening for the admin page on %s: %w", pol.Listen.Admin, err)
		}
		s.serve("admin listener", s.admin.Serve)
		log.Info("serving metrics and the budget page", "addr", s.admin.Addr())
	}
	return s, nil
}

// maxMessageBytes is the PostgreSQL door's message limit for a statement
// limit: the statement, and room for a Bind's parameters.
func maxMessageBytes(maxStatement int) int {
	if maxStatement <= 0 {
		return 0 // the door's default
	}
	return maxStatement + pgwire.StatementSlack
}

func (s *Server) serve(name string, serve func() error) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := serve(); err != nil {
			s.errs <- fmt.Errorf("server: %s: %w", name, err)
		}
	}()
}

// MySQLAddr is the address of the MySQL front door ("" if not open).
func (s *Server) MySQLAddr() string {
	if s.mysql == nil {
		return ""
	}
	return s.mysql.Addr()
}

// PostgresAddr is the address of the PostgreSQL front door ("" if not open).
func (s *Server) PostgresAddr() string {
	if s.pg == nil {
		return ""
	}
	return s.pg.Addr()
}

// AdminAddr is the address of the admin listener ("" if not open).
func (s *Server) AdminAddr() string {
	if s.admin == nil {
		return ""
	}
	return s.admin.Addr()
}

// Wait blocks until ctx ends or a listener fails.
func (s *Server) Wait(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return nil
	case err := <-s.errs:
		return err
	}
}

// Close stops the listeners, then closes the ledger and the backend.
func (s *Server) Close() error {
	var errs []error
	if s.mysql != nil {
		errs = append(errs, s.mysql.Close())
	}
	if s.pg != nil {
		errs = append(errs, s.pg.Close())
	}
	if s.admin != nil {
		errs = append(errs, s.admin.Close())
	}
	s.wg.Wait()
	if s.Engine != nil {
		errs = append(errs, s.Engine.Close())
	}
	if s.ledger != nil {
		errs = append(errs, s.ledger.Close())
	}
	if s.backend != nil {
		errs = append(errs, s.backend.Close())
	}
	return errors.Join(errs...)
}
