package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	sqlite3 "modernc.org/sqlite"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// Config configures one SQL source.
type Config struct {
	Name string
	// Driver is "sqlite" or "postgres".
	Driver string
	// Path is the SQLite file; DSN the PostgreSQL connection string.
	Path string
	DSN  string
	// Table is seed 003's table (default governance_tasks).
	Table string
	// Pool is the generic worker name of seed 003's queue (default
	// claude-chat): pending rows assigned to it are everyone's.
	Pool string
	// Lease is the default lease of a claim (default 20 min).
	Lease time.Duration
	// SeedTimeout is the lease of rows claimed by the seed's own SQL, which
	// records only started_at (default: Lease).
	SeedTimeout time.Duration
	// Grace is how long an agent's expired lease waits before claim-next
	// rescues the task (default model.DefaultPolicy().Grace).
	Grace time.Duration
	// Create makes the table (and migrates it) if it does not exist: the
	// embedded default. A team's existing table is changed only by Migrate.
	Create bool
	// Inspect opens the store to read its schema only (Plan): nothing is
	// created or migrated, a missing table is no error, and a SQLite file
	// is opened read-only, which it must already be.
	Inspect bool
	// MustExist refuses a missing SQLite file with MISCONFIGURED naming it,
	// so a mistyped path is reported rather than made into an empty queue.
	MustExist bool
	// Overlap is how far back an incremental poll looks past its watermark,
	// for transactions that commit after a poll ran (default 5 s).
	Overlap time.Duration
	// ReconcileEvery forces a full poll now and then (default 5 min).
	ReconcileEvery time.Duration
	// ListenPause: when two NOTIFYs reach Watch within it, Watch stops
	// listening for that long and then hints once, so that a busy table
	// wakes each watcher's connection a few times a second instead of for
	// every change (default 200 ms; PostgreSQL only).
	ListenPause time.Duration
	// ProbeEvery is how often Watch on SQLite reads PRAGMA data_version,
	// which changes when another connection (in any process) commits
	// (default 100 ms).
	ProbeEvery time.Duration
	// Now, on SQLite only, is the clock the store's statements read instead
	// of the database's (tests hand in their own); PostgreSQL always judges
	// leases by its server's clock.
	Now func() time.Time
}

// Store is a SQL source. It implements sources.Source and sources.Watcher.
type Store struct {
	cfg        Config
	d          dialect
	db         conn
	pgPool     *pgxpool.Pool
	sqliteDB   *sql.DB
	table      string // quoted
	plainTable string
	tag        string // the table's name in the audit and tombstone tables
	channel    string // NOTIFY channel
	clock      string // the key of Config.Now in clocks; "" reads the database's clock

	marks sources.MarkCache // the move marker as last read

	mu       sync.RWMutex
	have     map[string]bool
	migrated bool
	sql      statements
}

var (
	_ sources.Source  = (*Store)(nil)
	_ sources.Watcher = (*Store)(nil)
)

// registerFunctions adds claimdeck's SQL functions to the SQLite driver,
// once, before the first SQLite store opens: a command on PostgreSQL or
// another source never pays for it.
var registerFunctions = sync.OnceFunc(func() {
	// Seed 003's SQL says NOW(); SQLite has no such function. Registering it
	// lets the seed's statements run verbatim on the embedded queue, writing
	// times in the format claimdeck reads.
	_ = sqlite3.RegisterScalarFunction("now", 0, func(*sqlite3.FunctionContext, []driver.Value) (driver.Value, error) {
		return time.Now().UTC().Format(sqliteTime), nil
	})
	// A store opened with Config.Now reads its time through this, keyed by
	// the store, so that statements stay text rendered once.
	_ = sqlite3.RegisterScalarFunction("claimdeck_clock", 1, func(_ *sqlite3.FunctionContext, args []driver.Value) (driver.Value, error) {
		key, _ := args[0].(string)
		now, ok := clocks.Load(key)
		if !ok {
			return nil, fmt.Errorf("no clock %q", key)
		}
		return now.(func() time.Time)().UTC().Format(sqliteTime), nil
	})
})

// clocks holds the Config.Now of each open SQLite store that has one.
var clocks sync.Map

// Open connects and checks the table. A table without seed 003's columns is
// MISCONFIGURED; an unmigrated one can be read but not written.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	if cfg.Table == "" {
		cfg.Table = "governance_tasks"
	}
	if cfg.Pool == "" {
		cfg.Pool = "claude-chat"
	}
	if cfg.Lease <= 0 {
		cfg.Lease = model.DefaultPolicy().Lease
	}
	if cfg.Grace <= 0 {
		cfg.Grace = model.DefaultPolicy().Grace
	}
	if cfg.SeedTimeout <= 0 {
		cfg.SeedTimeout = cfg.Lease
	}
	if cfg.Overlap <= 0 {
		cfg.Overlap = 5 * time.Second
	}
	if cfg.ReconcileEvery <= 0 {
		cfg.ReconcileEvery = 5 * time.Minute
	}
	if cfg.ListenPause <= 0 {
		cfg.ListenPause = 200 * time.Millisecond
	}
	if cfg.ProbeEvery <= 0 {
		cfg.ProbeEvery = 100 * time.Millisecond
	}
	table, err := quoteTable(cfg.Table)
	if err != nil {
		return nil, model.Wrap(model.CodeMisconfigured, "open", "", err)
	}
	s := &Store{cfg: cfg, table: table, plainTable: cfg.Table}
	if cfg.Now != nil {
		if cfg.Driver != "sqlite" {
			return nil, model.Errorf(model.CodeMisconfigured, "open", "", "source %q: a clock of its own is for SQLite only", cfg.Name)
		}
		s.clock = uuid.NewString()
		clocks.Store(s.clock, cfg.Now)
	}
	s.tag = strings.ReplaceAll(cfg.Table, ".", "_")
	s.channel = "claimdeck_" + s.tag
	switch cfg.Driver {
	case "sqlite":
		err = s.openSQLite(cfg.Path)
	case "postgres":
		err = s.openPostgres(ctx, cfg.DSN)
	default:
		err = model.Errorf(model.CodeMisconfigured, "open", "", "unknown SQL driver %q (want sqlite or postgres)", cfg.Driver)
	}
	if err != nil {
		clocks.Delete(s.clock)
		return nil, err
	}
	if cfg.Inspect {
		return s, nil
	}
	if err := s.prepare(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *Store) openSQLite(path string) error {
	if path == "" {
		return model.Errorf(model.CodeMisconfigured, "open", "", "source %q: no path for the SQLite file", s.cfg.Name)
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) && (s.cfg.MustExist || s.cfg.Inspect) {
		return sources.NotMade(model.Errorf(model.CodeMisconfigured, "open", "", "source %q: the SQLite file %s does not exist (check path; claimdeck migrate or --create makes it)", s.cfg.Name, path))
	}
	if s.cfg.Inspect {
		q := url.Values{}
		q.Add("_pragma", "busy_timeout(10000)")
		q.Set("mode", "ro")
		db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
		if err != nil {
			return model.Wrap(model.CodeMisconfigured, "open", "", err)
		}
		s.d = sqlite
		s.db = &sqlConn{sqlQ: sqlQ{db: db}, db: db}
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return model.Wrap(model.CodeMisconfigured, "open", "", err)
	}
	// Made 0600 here, whatever the umask, before SQLite would make it 0644:
	// it holds every task and token. SQLite gives its -wal and -shm files
	// the database file's mode.
	if f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
		f.Close()
	} else if !errors.Is(err, os.ErrExist) {
		return model.Wrap(model.CodeMisconfigured, "open", "", err)
	}
	registerFunctions()
	db, err := sql.Open("sqlite", sqliteDSN(path))
	if err != nil {
		return model.Wrap(model.CodeMisconfigured, "open", "", err)
	}
	// SQLite has one writer at a time; a few connections keep readers going
	// without a crowd of writers spinning on the busy handler.
	db.SetMaxOpenConns(4)
	s.d = sqlite
	s.db = &sqlConn{sqlQ: sqlQ{db: db}, db: db}
	s.sqliteDB = db
	return nil
}

// sqliteDSN is the data source name a writable SQLite store opens path
// with: a wait for the writer, the write-ahead log, and transactions that
// take the write lock when they begin.
func sqliteDSN(path string) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Set("_txlock", "immediate")
	return "file:" + path + "?" + q.Encode()
}

func (s *Store) openPostgres(ctx context.Context, dsn string) error {
	if dsn == "" {
		return model.Errorf(model.CodeMisconfigured, "open", "", "source %q: no DSN for PostgreSQL", s.cfg.Name)
	}
	pc, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return model.Errorf(model.CodeMisconfigured, "open", "", "source %q: the DSN does not parse (its text is not shown: it may hold a password)", s.cfg.Name)
	}
	if err := atInHost(pc.ConnConfig.Config); err != nil {
		return model.Errorf(model.CodeMisconfigured, "open", "", "source %q: %v", s.cfg.Name, err)
	}
	if pc.ConnConfig.ConnectTimeout == 0 {
		pc.ConnConfig.ConnectTimeout = 10 * time.Second
	}
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return s.classify("open", "", err)
	}
	s.d = postgres
	s.pgPool = pool
	s.db = &pgConn{pgQ: pgQ{db: pool}, pool: pool}
	return nil
}

// atInHost refuses a DSN whose host holds an '@': libpq and pgx end the
// password at the first '@', so the rest of an unencoded password would be
// dialled as a host name and printed in every connect error.
func atInHost(c pgconn.Config) error {
	hosts := []string{c.Host}
	for _, fb := range c.Fallbacks {
		hosts = append(hosts, fb.Host)
	}
	for _, h := range hosts {
		if strings.Contains(h, "@") {
			return errors.New("the DSN's host part holds an '@': percent-encode an '@' in the password as %40 (the DSN is not shown: it holds a password)")
		}
	}
	return nil
}

// hidden tells a table this role may not read from one that is not there:
// PostgreSQL lists no columns of a table without a privilege on it, but
// to_regclass still finds it.
func (s *Store) hidden(ctx context.Context) error {
	if s.d.name != postgres.name {
		return nil
	}
	var found bool
	if err := s.db.queryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", s.plainTable).Scan(&found); err != nil || !found {
		return nil
	}
	return model.Errorf(model.CodeMisconfigured, "open", "",
		"permission denied: the database role may not read table %s (GRANT SELECT, INSERT, UPDATE, DELETE ON %s TO the role, or connect as its owner)", s.plainTable, s.plainTable)
}

// prepare checks the table, creating it for the embedded default.
func (s *Store) prepare(ctx context.Context) error {
	if err := s.loadColumns(ctx); err != nil {
		return err
	}
	s.mu.RLock()
	exists, migrated := len(s.have) > 0, s.migrated
	// A table an older claimdeck migrated lacks the stamp it polls by.
	current := migrated && (s.d.name != postgres.name || s.sql.stamped)
	s.mu.RUnlock()
	if !exists {
		if err := s.hidden(ctx); err != nil {
			return err
		}
	}
	if !exists && s.cfg.Create {
		if err := s.db.tx(ctx, func(q querier) error { return s.createSeedTable(ctx, q) }); err != nil {
			return s.classify("create table", "", err)
		}
	}
	if !current && s.cfg.Create {
		return s.Migrate(ctx)
	}
	if !exists && !s.cfg.Create {
		return sources.NotMade(model.Errorf(model.CodeMisconfigured, "open", "", "table %s does not exist (claimdeck migrate --create makes seed 003's table and migrates it)", s.plainTable))
	}
	return nil
}

func (s *Store) loadColumns(ctx context.Context) error {
	have, err := s.columnsOf(ctx, s.db)
	if err != nil {
		return s.classify("open", "", err)
	}
	if len(have) > 0 {
		if missing := missingRequired(have); len(missing) > 0 {
			return model.Errorf(model.CodeMisconfigured, "open", "",
				"table %s lacks seed 003 columns: %s", s.plainTable, strings.Join(missing, ", "))
		}
	}
	migrated := len(have) > 0 && have[auditTrail]
	for _, c := range columns {
		migrated = migrated && have[c.name]
	}
	s.mu.Lock()
	s.have, s.migrated = have, migrated
	s.sql = s.statements(have)
	s.mu.Unlock()
	return nil
}

// Migrated reports whether the table has every column the protocol needs.
func (s *Store) Migrated() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.migrated
}

// Behind names what `claimdeck migrate` would still add to a migrated
// table that works without it, or "" when nothing: a PostgreSQL table
// without the transaction stamp is polled by time, which reads the
// overlap's rows again on every poll.
func (s *Store) Behind() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.migrated && s.pgPool != nil && !s.have[stampColumn] {
		return "rows carry no transaction stamp, so a busy table's polls read the last seconds' rows again"
	}
	return ""
}

// Name is the configured source name.
func (s *Store) Name() string { return s.cfg.Name }

// Caps: claims are single conditional statements, and claim-next rescues
// a dead holder's task; PostgreSQL pushes changes (LISTEN/NOTIFY), SQLite
// tells them by its data version.
func (s *Store) Caps() sources.Caps {
	return sources.Caps{AtomicClaim: true, Rescue: true, Subtasks: true, Escalation: true, WriteCheck: true, Watch: true, Trail: true}
}

// Close releases the connections.
func (s *Store) Close() error {
	s.db.close()
	clocks.Delete(s.clock)
	return nil
}

// classify gives a driver error its ntask code and strips any secret from
// its text.
func (s *Store) classify(op, id string, err error) error {
	if err == nil {
		return nil
	}
	if guarded(err) {
		return s.guardAnswer(op, id)
	}
	var me *model.Error
	if errors.As(err, &me) {
		return err
	}
	code, hint := model.CodeAPIError, ""
	var cause error
	const refused = "the database refuses writes (a read-only database, or a user without the privilege): "
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "42501", "25006": // insufficient_privilege, read_only_sql_transaction
			code, hint = model.CodeMisconfigured, refused
		case "28P01", "28000": // invalid_password, invalid_authorization_specification (no such role)
			code, cause = model.CodeMisconfigured, sources.ErrCredentials
		case "3D000": // invalid_catalog_name
			code, hint = model.CodeMisconfigured, "the database named in the DSN does not exist: "
		case "22021", "22P05": // character_not_in_repertoire (a NUL), untranslatable_character
			code, hint = model.CodeMisconfigured, "a task id or text holds a NUL byte or invalid UTF-8, which PostgreSQL cannot store: remove it: "
		case "42P01", "42703": // undefined_table, undefined_column
			code, hint = model.CodeMisconfigured, "the table is not what claimdeck expects: "
		}
	}
	var sqErr *sqlite3.Error
	if errors.As(err, &sqErr) {
		switch sqErr.Code() & 0xff {
		case 8: // SQLITE_READONLY
			code, hint = model.CodeMisconfigured, refused
		case 14: // SQLITE_CANTOPEN
			code, hint = model.CodeMisconfigured, "the database file cannot be opened: "
		}
	}
	msg := model.Redact(hint + err.Error())
	if cause != nil {
		return model.Errorf(code, op, id, "source %s: %w: %s", s.cfg.Name, cause, msg)
	}
	return &model.Error{Code: code, Op: op, Task: id, Msg: fmt.Sprintf("source %s: %s", s.cfg.Name, msg)}
}

func (s *Store) stmts() (statements, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.sql, s.migrated
}

// writable refuses writes on a table Migrate has not prepared.
func (s *Store) writable(op, id string) (statements, error) {
	st, ok := s.stmts()
	if !ok {
		return st, model.Errorf(model.CodeMisconfigured, op, id,
			"table %s lacks claimdeck's lease columns: run `claimdeck migrate --source %s`", s.plainTable, s.cfg.Name)
	}
	return st, nil
}
