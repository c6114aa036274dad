// Package server wires one running dpproxy from a policy: the backend pool,
// the ledger, the engine and the front doors. `dpproxy serve` and `dpproxy
// demo` both start one.
package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/dpproxy/dpproxy/backend"
	"github.com/dpproxy/dpproxy/ledger"
	"github.com/dpproxy/dpproxy/parser"
	"github.com/dpproxy/dpproxy/policy"
	"github.com/dpproxy/dpproxy/proxy"
	"github.com/dpproxy/dpproxy/proxy/mysqlwire"
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
	backend *backend.Backend
	ledger  *ledger.Ledger
	mysql   *mysqlwire.Server
	log     *slog.Logger
	wg      sync.WaitGroup
	errs    chan error
}

// Start opens everything the policy names and starts listening. On error,
// whatever was opened is closed again.
func Start(ctx context.Context, opts Options) (_ *Server, err error) {
	pol := opts.Policy
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	s := &Server{log: log, errs: make(chan error, 2)}
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
	if s.ledger, err = ledger.Open(pol.Ledger.Path, ledger.Options{Logger: log}); err != nil {
		return nil, err
	}
	if s.Engine, err = proxy.New(openCtx, proxy.Config{
		Policy: pol, Backend: s.backend, Ledger: s.ledger, Logger: log, Database: opts.Database,
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
	if pol.Listen.MySQL != "" {
		eng := s.Engine
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
			ServerVersion:  eng.ServerVersion(),
			TLS:            tlsConfig,
			MaxConnections: pol.Limits.MaxConnections,
			IdleTimeout:    pol.Limits.IdleTimeout.Duration,
			QueryTimeout:   pol.Limits.QueryTimeout.Duration,
			Logger:         log,
		})
		if err != nil {
			return nil, fmt.Errorf("server: listening for MySQL clients on %s: %w", pol.Listen.MySQL, err)
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			if err := s.mysql.Serve(); err != nil {
				s.errs <- fmt.Errorf("server: MySQL front door: %w", err)
			}
		}()
		log.Info("listening for MySQL clients", "addr", s.mysql.Addr())
	}
	return s, nil
}

// MySQLAddr is the address of the MySQL front door ("" if not open).
func (s *Server) MySQLAddr() string {
	if s.mysql == nil {
		return ""
	}
	return s.mysql.Addr()
}

// Wait blocks until ctx ends or a front door fails.
func (s *Server) Wait(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return nil
	case err := <-s.errs:
		return err
	}
}

// Close stops the front doors, then closes the ledger and the backend.
func (s *Server) Close() error {
	var errs []error
	if s.mysql != nil {
		errs = append(errs, s.mysql.Close())
	}
	s.wg.Wait()
	if s.ledger != nil {
		errs = append(errs, s.ledger.Close())
	}
	if s.backend != nil {
		errs = append(errs, s.backend.Close())
	}
	return errors.Join(errs...)
}
