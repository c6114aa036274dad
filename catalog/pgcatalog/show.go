package pgcatalog

import (
	"strconv"
	"strings"
)

// setting is one run-time setting SHOW, current_setting() and pg_settings
// report. Values are PostgreSQL 15's defaults unless the proxy's nature
// says otherwise (transaction_read_only: dpproxy never writes).
type setting struct {
	name, vartype, category, context, desc string
	value                                  func(c *Catalog, s Session) string
}

func fixed(v string) func(*Catalog, Session) string {
	return func(*Catalog, Session) string { return v }
}

var settings = []setting{
	{"application_name", "string", "Reporting and Logging", "user", "Sets the application name to be reported in statistics and logs.",
		func(_ *Catalog, s Session) string { return s.ApplicationName }},
	{"block_size", "integer", "Preset Options", "internal", "Shows the size of a disk block.", fixed("8192")},
	{"bytea_output", "enum", "Client Connection Defaults", "user", "Sets the output format for bytea.", fixed("hex")},
	{"client_encoding", "string", "Client Connection Defaults", "user", "Sets the client's character set encoding.", fixed("UTF8")},
	{"client_min_messages", "enum", "Client Connection Defaults", "user", "Sets the message levels that are sent to the client.", fixed("notice")},
	{"datestyle", "string", "Client Connection Defaults", "user", "Sets the display format for date and time values.", fixed("ISO, MDY")},
	{"default_transaction_isolation", "enum", "Client Connection Defaults", "user", "Sets the transaction isolation level of each new transaction.", fixed("read committed")},
	{"default_transaction_read_only", "bool", "Client Connection Defaults", "user", "Sets the default read-only status of new transactions.", fixed("on")},
	{"extra_float_digits", "integer", "Client Connection Defaults", "user", "Sets the number of digits displayed for floating-point values.", fixed("1")},
	{"idle_in_transaction_session_timeout", "integer", "Client Connection Defaults", "user", "Sets the maximum allowed idle time between queries, when in a transaction.", fixed("0")},
	{"in_hot_standby", "bool", "Preset Options", "internal", "Shows whether hot standby is currently active.", fixed("off")},
	{"integer_datetimes", "bool", "Preset Options", "internal", "Shows whether datetimes are integer based.", fixed("on")},
	{"intervalstyle", "enum", "Client Connection Defaults", "user", "Sets the display format for interval values.", fixed("postgres")},
	{"is_superuser", "bool", "Preset Options", "internal", "Shows whether the current user is a superuser.", fixed("off")},
	{"lc_collate", "string", "Preset Options", "internal", "Shows the collation order locale.", fixed("C.UTF-8")},
	{"lc_ctype", "string", "Preset Options", "internal", "Shows the character classification and case conversion locale.", fixed("C.UTF-8")},
	{"lc_messages", "string", "Client Connection Defaults", "superuser", "Sets the language in which messages are displayed.", fixed("C.UTF-8")},
	{"lock_timeout", "integer", "Client Connection Defaults", "user", "Sets the maximum allowed duration of any wait for a lock.", fixed("0")},
	{"max_connections", "integer", "Connections and Authentication", "postmaster", "Sets the maximum number of concurrent connections.", fixed("100")},
	{"max_identifier_length", "integer", "Preset Options", "internal", "Shows the maximum identifier length.", fixed("63")},
	{"search_path", "string", "Client Connection Defaults", "user", "Sets the schema search order for names that are not schema-qualified.",
		func(c *Catalog, _ Session) string {
			if c.schema == "public" {
				return `"$user", public`
			}
			return `"$user", ` + quoteIdentIfNeeded(c.schema)
		}},
	{"server_encoding", "string", "Preset Options", "internal", "Shows the server (database) character set encoding.", fixed("UTF8")},
	{"server_version", "string", "Preset Options", "internal", "Shows the server version.", func(c *Catalog, _ Session) string { return c.version }},
	{"server_version_num", "integer", "Preset Options", "internal", "Shows the server version as an integer.", func(c *Catalog, _ Session) string { return versionNum(c.version) }},
	{"session_authorization", "string", "Developer Options", "user", "Sets the session user name.", func(_ *Catalog, s Session) string { return s.User }},
	{"standard_conforming_strings", "bool", "Version and Platform Compatibility", "user", "Causes '...' strings to treat backslashes literally.", fixed("on")},
	{"statement_timeout", "integer", "Client Connection Defaults", "user", "Sets the maximum allowed duration of any statement.", fixed("0")},
	{"timezone", "string", "Client Connection Defaults", "user", "Sets the time zone for displaying and interpreting time stamps.", fixed("UTC")},
	{"transaction_isolation", "enum", "Client Connection Defaults", "user", "Sets the current transaction's isolation level.", fixed("read committed")},
	{"transaction_read_only", "bool", "Client Connection Defaults", "user", "Sets the current transaction's read-only status.", fixed("on")},
}

var settingsByName = func() map[string]*setting {
	m := map[string]*setting{}
	for i := range settings {
		m[settings[i].name] = &settings[i]
	}
	return m
}()

// Show is SHOW name and current_setting('name'): the session's value if
// it changed the setting, else the default. Names are case-insensitive.
func (c *Catalog) Show(name string, sess Session) (string, error) {
	key := strings.ToLower(strings.TrimSpace(name))
	s, ok := settingsByName[key]
	if !ok {
		return "", &UnknownSettingError{Name: name}
	}
	if sess.Settings != nil {
		if v, ok := sess.Settings(key); ok {
			return v, nil
		}
	}
	return s.value(c, sess), nil
}

// versionNum is server_version_num: major * 10000 + minor for PostgreSQL
// 10 and later ("15.18" → 150018).
func versionNum(v string) string {
	f := strings.FieldsFunc(v, func(r rune) bool { return r < '0' || r > '9' })
	if len(f) == 0 {
		return "0"
	}
	major, _ := strconv.Atoi(f[0])
	minor := 0
	if len(f) > 1 {
		minor, _ = strconv.Atoi(f[1])
	}
	return strconv.Itoa(major*10000 + minor)
}
