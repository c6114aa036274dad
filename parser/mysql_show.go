package parser

import (
	"github.com/pingcap/tidb/pkg/parser/ast"
	driver "github.com/pingcap/tidb/pkg/parser/test_driver"
)

// mysqlShowKinds maps the SHOW statements dpproxy answers to the model.
var mysqlShowKinds = map[ast.ShowStmtType]ShowKind{
	ast.ShowDatabases:   ShowDatabases,
	ast.ShowTables:      ShowTables,
	ast.ShowColumns:     ShowColumns,
	ast.ShowVariables:   ShowVariables,
	ast.ShowStatus:      ShowStatus,
	ast.ShowWarnings:    ShowWarnings,
	ast.ShowErrors:      ShowErrors,
	ast.ShowCollation:   ShowCollation,
	ast.ShowCharset:     ShowCharset,
	ast.ShowCreateTable: ShowCreateTable,
	ast.ShowTableStatus: ShowTableStatus,
	ast.ShowIndex:       ShowIndex,
	ast.ShowEngines:     ShowEngines,
	ast.ShowProcessList: ShowProcessList,
	ast.ShowGrants:      ShowGrants,
}

// mysqlShowNames names other MySQL SHOW statements in refusals.
var mysqlShowNames = map[ast.ShowStmtType]string{
	ast.ShowCreateView:      "SHOW CREATE VIEW",
	ast.ShowCreateUser:      "SHOW CREATE USER",
	ast.ShowCreateDatabase:  "SHOW CREATE DATABASE",
	ast.ShowCreateSequence:  "SHOW CREATE SEQUENCE",
	ast.ShowCreateProcedure: "SHOW CREATE PROCEDURE",
	ast.ShowTriggers:        "SHOW TRIGGERS",
	ast.ShowProcedureStatus: "SHOW PROCEDURE STATUS",
	ast.ShowFunctionStatus:  "SHOW FUNCTION STATUS",
	ast.ShowEvents:          "SHOW EVENTS",
	ast.ShowPlugins:         "SHOW PLUGINS",
	ast.ShowProfile:         "SHOW PROFILE",
	ast.ShowProfiles:        "SHOW PROFILES",
	ast.ShowMasterStatus:    "SHOW MASTER STATUS",
	ast.ShowBinlogStatus:    "SHOW BINARY LOG STATUS",
	ast.ShowReplicaStatus:   "SHOW REPLICA STATUS",
	ast.ShowPrivileges:      "SHOW PRIVILEGES",
	ast.ShowOpenTables:      "SHOW OPEN TABLES",
	ast.ShowConfig:          "SHOW CONFIG",
}

func convertShow(s *ast.ShowStmt) (*Show, error) {
	kind, ok := mysqlShowKinds[s.Tp]
	if !ok {
		if name, ok := mysqlShowNames[s.Tp]; ok {
			return nil, &UnsupportedError{What: name}
		}
		return nil, &UnsupportedError{What: "this SHOW statement"}
	}
	if s.CountWarningsOrErrors {
		return nil, &UnsupportedError{What: "SHOW COUNT(*) WARNINGS/ERRORS"}
	}
	if s.Limit != nil {
		return nil, &UnsupportedError{What: "SHOW ... LIMIT"}
	}
	out := &Show{Kind: kind, Full: s.Full, Global: s.GlobalScope, Schema: s.DBName}
	if s.Table != nil {
		out.Table = s.Table.Name.O
		if s.Table.Schema.O != "" {
			out.Schema = s.Table.Schema.O
		}
	}
	if s.User != nil && !s.User.CurrentUser {
		// SHOW GRANTS FOR u: Name holds the user.
		out.Name = s.User.Username
	}
	if len(s.Roles) > 0 {
		return nil, &UnsupportedError{What: "SHOW GRANTS ... USING"}
	}
	if s.Pattern != nil {
		v, ok := s.Pattern.Pattern.(*driver.ValueExpr)
		if !ok || (v.Kind() != driver.KindString && v.Kind() != driver.KindBytes) {
			return nil, &UnsupportedError{What: "SHOW ... LIKE with a pattern that is not a string literal"}
		}
		out.Like = v.GetString()
	}
	if s.Where != nil {
		where, err := convertExpr(s.Where)
		if err != nil {
			return nil, err
		}
		out.Where = where
	}
	return out, nil
}
