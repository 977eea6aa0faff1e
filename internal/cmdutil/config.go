package cmdutil

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/viper"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources/hub"
	"github.com/claimdeck/claimdeck/sources/notion"
	"github.com/claimdeck/claimdeck/sources/relay"
)

// Config is the whole configuration file.
type Config struct {
	Actor    string `mapstructure:"actor" json:"actor"`
	ReadOnly bool   `mapstructure:"read_only" json:"read_only"`
	// Output is a person's default for -o (json or table; CLAIMDECK_OUTPUT).
	// Agents' default stays JSON; a command that answers in JSON only keeps
	// JSON whatever it says.
	Output   string         `mapstructure:"output" json:"output,omitempty"`
	AuditLog string         `mapstructure:"audit_log" json:"audit_log"`
	Sources  []SourceConfig `mapstructure:"sources" json:"sources"`
	// DefaultSource is the source every door acts on when several are
	// configured and the caller names none (PickSource).
	DefaultSource string        `mapstructure:"default_source" json:"default_source,omitempty"`
	Escalation    LadderConfig  `mapstructure:"escalation" json:"escalation"`
	Mesh          MeshConfig    `mapstructure:"mesh" json:"mesh"`
	Lease         time.Duration `mapstructure:"lease" json:"lease"`
	Grace         time.Duration `mapstructure:"grace" json:"grace"`
	Heartbeat     time.Duration `mapstructure:"heartbeat_every" json:"heartbeat_every"`
	// LeaseCeiling: an agent's lease longer than this is suspicious and
	// judged as ending there (model.Policy.LeaseCeiling); 0 turns it off.
	LeaseCeiling time.Duration `mapstructure:"lease_ceiling" json:"lease_ceiling"`
	// HistoryWindow is how long the dashboard keeps finished tasks in
	// memory; older ones stay in the backend until a filter asks.
	HistoryWindow time.Duration `mapstructure:"history_window" json:"history_window"`
	// MetricsListen serves Prometheus metrics from the dashboard (and the
	// demo) at this address, as `claimdeck metrics --listen` does.
	MetricsListen string `mapstructure:"metrics_listen" json:"metrics_listen,omitempty"`
	// SSH is `claimdeck ssh`'s: the dashboard served over SSH.
	SSH SSHConfig `mapstructure:"ssh" json:"ssh,omitempty"`
	// Alerts ring the dashboard's terminal for a new escalation or a node
	// gone DOWN; both off unless asked for.
	Alerts AlertConfig `mapstructure:"alerts" json:"alerts"`
	// Keys rebinds dashboard keys: action name → keys.
	Keys map[string][]string `mapstructure:"keys" json:"keys,omitempty"`
	// Filters are the dashboard's saved filters by name (:save, :load).
	Filters map[string]string `mapstructure:"filters" json:"filters,omitempty"`
	MCP     MCPConfig         `mapstructure:"mcp" json:"mcp"`
	Review  ReviewConfig      `mapstructure:"review" json:"review"`

	File     string      // the file it came from, if any
	fileMode os.FileMode // its mode
	// implicit is true when no configuration names any source and the
	// embedded default queue stands in.
	Implicit bool
}

// ReviewConfig is the `review:` section: the reviewer's rules.
type ReviewConfig struct {
	// SelfApprove lets the agent (or person) that sent a task to Review
	// approve it too; off, such an approval is refused.
	SelfApprove bool `mapstructure:"self_approve" json:"self_approve,omitempty"`
}

// SourceConfig is one entry of `sources:`. Fields apply by kind.
type SourceConfig struct {
	Name     string `mapstructure:"name" json:"name"`
	Kind     string `mapstructure:"kind" json:"kind"`
	ReadOnly bool   `mapstructure:"read_only" json:"read_only,omitempty"`
	Color    string `mapstructure:"color" json:"color,omitempty"`
	// Lease overrides the global lease for this source (lockdir: seed 004's 1 h).
	Lease time.Duration `mapstructure:"lease" json:"lease,omitempty"`
	// sqlite, lockdir
	Path string `mapstructure:"path" json:"path,omitempty"`
	// postgres
	DSN    string `mapstructure:"dsn" json:"dsn,omitempty"`
	DSNEnv string `mapstructure:"dsn_env" json:"dsn_env,omitempty"`
	// DSNFile names a file holding the DSN, read at each start (a systemd
	// credential, a container secret); only its owner may read it.
	DSNFile string `mapstructure:"dsn_file" json:"dsn_file,omitempty"`
	// sqlite, postgres
	Table string `mapstructure:"table" json:"table,omitempty"`
	// makeTable: `migrate --create` makes seed 003's table where none is.
	MakeTable bool
	// listenPause: the relay's PostgreSQL sources pause LISTEN for
	// relay.ListenPause, not a dashboard's 200 ms (zero: the store's own).
	ListenPause time.Duration
	Pool        string        `mapstructure:"pool" json:"pool,omitempty"`
	SeedTimeout time.Duration `mapstructure:"seed_timeout" json:"seed_timeout,omitempty"`
	// lockdir
	TasksFile string `mapstructure:"tasks_file" json:"tasks_file,omitempty"`
	// notion
	Token      string `mapstructure:"token" json:"token,omitempty"`
	TokenEnv   string `mapstructure:"token_env" json:"token_env,omitempty"`
	TokenFile  string `mapstructure:"token_file" json:"token_file,omitempty"`
	DatabaseID string `mapstructure:"database_id" json:"database_id,omitempty"`
	// TrailKeyEnv names the environment variable holding the key that
	// signs claimdeck's notes on pages (notion.Config.TrailKey), kept from
	// the agents; never inline. Unset: a key derived from the token.
	TrailKeyEnv string `mapstructure:"trail_key_env" json:"trail_key_env,omitempty"`
	// notion: which of the database's data sources holds the tasks (by id
	// or name; needed once it has several), per-request timeout and
	// per-command budget
	DataSourceID  string        `mapstructure:"data_source_id" json:"data_source_id,omitempty"`
	DataSource    string        `mapstructure:"data_source" json:"data_source,omitempty"`
	Timeout       time.Duration `mapstructure:"timeout" json:"timeout,omitempty"`
	CommandBudget time.Duration `mapstructure:"budget" json:"budget,omitempty"`
	Schema        string        `mapstructure:"schema" json:"schema,omitempty"`
	BaseURL       string        `mapstructure:"base_url" json:"base_url,omitempty"`
	// notion: requests/s per token (default 3), claim settle delay, seed 001 Handoff Queue database
	Rate float64 `mapstructure:"rate" json:"rate,omitempty"`
	// notion: the Notion-Version sent (2026-03-11 by default; 2025-09-03
	// where a workspace pins it) and the workspace whose shared budget the
	// token draws on (sources naming the same workspace slow down together)
	NotionVersion string `mapstructure:"notion_version" json:"notion_version,omitempty"`
	// APIVersion is notion_version's newer name: 2026-03-11 (the default)
	// or 2026-12-01; a bare YAML date is read as the date it was.
	APIVersion   string        `mapstructure:"api_version" json:"api_version,omitempty"`
	Workspace    string        `mapstructure:"workspace" json:"workspace,omitempty"`
	Settle       time.Duration `mapstructure:"settle" json:"settle,omitempty"`
	HandoffQueue string        `mapstructure:"handoff_queue" json:"handoff_queue,omitempty"`
	// notion, a database set up by today's notion-task skill: the Notion
	// user id a person's claim sets as Assignee
	OperatorUser string `mapstructure:"operator_user" json:"operator_user,omitempty"`
	// notion, a team's own database: property names by role, status
	// options by state, and properties it may lack, over the schema preset.
	Properties map[string]string `mapstructure:"properties" json:"properties,omitempty"`
	Statuses   map[string]string `mapstructure:"statuses" json:"statuses,omitempty"`
	Optional   []string          `mapstructure:"optional" json:"optional,omitempty"`
	// any kind: the `claimdeck relay` a dashboard reads this source
	// through (http://HOST:PORT), and the environment variable holding
	// its bearer token (relay.DefaultTokenEnv unless set). Actions still
	// go to the source itself.
	Relay         string `mapstructure:"relay" json:"relay,omitempty"`
	RelayTokenEnv string `mapstructure:"relay_token_env" json:"relay_token_env,omitempty"`
	// RelayTokenFile names a file holding that token instead, read at
	// each start; only its owner may read it.
	RelayTokenFile string `mapstructure:"relay_token_file" json:"relay_token_file,omitempty"`
}

// AlertConfig is `alerts:`: the terminal bell and desktop notifications.
type AlertConfig struct {
	Bell    bool `mapstructure:"bell" json:"bell"`
	Desktop bool `mapstructure:"desktop" json:"desktop"`
}

// LadderConfig is seed 001's escalation ladder.
type LadderConfig struct {
	StaleAfter    time.Duration `mapstructure:"stale_after" json:"stale_after"`
	UrgentAfter   time.Duration `mapstructure:"urgent_after" json:"urgent_after"`
	NotifyAfter   time.Duration `mapstructure:"notify_after" json:"notify_after"`
	EscalateAfter time.Duration `mapstructure:"escalate_after" json:"escalate_after"`
}

// Policy is the model policy the configuration asks for.
func (c *Config) Policy() model.Policy {
	return model.Policy{
		Lease:          c.Lease,
		HeartbeatEvery: c.Heartbeat,
		Grace:          c.Grace,
		LeaseCeiling:   c.LeaseCeiling,
		Ladder: model.Ladder{
			Stale: c.Escalation.StaleAfter, Urgent: c.Escalation.UrgentAfter,
			Notify: c.Escalation.NotifyAfter, Escalate: c.Escalation.EscalateAfter,
		},
	}
}

// configPath is where the configuration file is looked for by default.
func ConfigPath() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "claimdeck", "config.yaml")
}

// dataDir holds the embedded queue and the audit log; "" when neither
// $XDG_DATA_HOME nor $HOME says where: never a shared directory such as
// $TMPDIR/claimdeck, where another user could plant files (noHome).
func dataDir() string { return userDir("XDG_DATA_HOME", ".local", "share") }

// userDir is $env/claimdeck, else ~/<under…>/claimdeck, else "".
func userDir(env string, under ...string) string {
	if d := os.Getenv(env); d != "" {
		return filepath.Join(d, "claimdeck")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(append(append([]string{home}, under...), "claimdeck")...)
	}
	return ""
}

// noHome is the refusal of a default path that would need $HOME.
func NoHome(what, env, key string) error {
	return model.Errorf(model.CodeMisconfigured, "config", "", "%s has no place: set HOME (or %s), or %s in the configuration; claimdeck does not fall back to a shared directory", what, env, key)
}

// defaultIn is name inside dir, or "" when dir is unknown.
func defaultIn(dir, name string) string {
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, name)
}

// loadConfig reads the file (explicit, or the default if it exists), then
// CLAIMDECK_* environment variables over it. With no file at all, the
// embedded SQLite queue is the one source.
func LoadConfig(file string) (*Config, error) {
	v := viper.New()
	v.SetEnvPrefix("CLAIMDECK")
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
	v.AutomaticEnv()
	p := model.DefaultPolicy()
	// viper's Unmarshal sees environment-only keys only when they have a
	// default, so every scalar key gets one.
	v.SetDefault("actor", "")
	v.SetDefault("read_only", false)
	v.SetDefault("output", "")
	v.SetDefault("audit_log", defaultIn(dataDir(), "audit.jsonl"))
	v.SetDefault("lease", p.Lease)
	v.SetDefault("grace", p.Grace)
	v.SetDefault("heartbeat_every", p.HeartbeatEvery)
	v.SetDefault("lease_ceiling", p.LeaseCeiling)
	v.SetDefault("history_window", hub.DefaultWindow)
	v.SetDefault("metrics_listen", "")
	v.SetDefault("escalation.stale_after", p.Ladder.Stale)
	v.SetDefault("escalation.urgent_after", p.Ladder.Urgent)
	v.SetDefault("escalation.notify_after", p.Ladder.Notify)
	v.SetDefault("escalation.escalate_after", p.Ladder.Escalate)
	meshDefaults(v)
	v.SetDefault("mcp.overrides", false)

	explicit := file != ""
	if !explicit {
		if env := os.Getenv("CLAIMDECK_CONFIG"); env != "" {
			file, explicit = env, true
		} else {
			file = ConfigPath()
		}
	}
	cfg := &Config{}
	if file != "" {
		if _, err := os.Stat(file); err != nil && explicit {
			if errors.Is(err, os.ErrNotExist) {
				return nil, model.Errorf(model.CodeMisconfigured, "config", "", "the configuration file %s does not exist (claimdeck config path shows where it is looked for)", file)
			}
			return nil, model.Errorf(model.CodeMisconfigured, "config", "", "%v", err)
		}
		mode, err := strictFile(file)
		if err != nil {
			return nil, err
		}
		cfg.fileMode = mode
		v.SetConfigFile(file)
		if filepath.Ext(file) == "" {
			v.SetConfigType("yaml")
		}
		if err := v.ReadInConfig(); err != nil {
			var notFound viper.ConfigFileNotFoundError
			missing := errors.As(err, &notFound) || errors.Is(err, os.ErrNotExist)
			if explicit || !missing {
				return nil, model.Errorf(model.CodeMisconfigured, "config", "", "%s: %v", file, err)
			}
		} else {
			cfg.File = file
		}
	}
	if err := checkEnv(); err != nil {
		return nil, err
	}
	if err := v.Unmarshal(cfg, viper.DecodeHook(mapstructure.ComposeDecodeHookFunc(
		mapstructure.StringToTimeDurationHookFunc(), mapstructure.StringToSliceHookFunc(","), dateAsText))); err != nil {
		if cfg.File == "" {
			return nil, model.Errorf(model.CodeMisconfigured, "config", "", "%v", err)
		}
		return nil, model.Errorf(model.CodeMisconfigured, "config", "", "%s: %v", cfg.File, err)
	}
	if cfg.Actor == "" {
		cfg.Actor = loginName()
	}
	for i := range cfg.Sources {
		if cfg.Sources[i].Relay != "" && cfg.Sources[i].RelayTokenEnv == "" && cfg.Sources[i].RelayTokenFile == "" {
			cfg.Sources[i].RelayTokenEnv = relay.DefaultTokenEnv
		}
	}
	if len(cfg.Sources) == 0 && cfg.File == "" {
		cfg.Sources = []SourceConfig{{Name: "local", Kind: "sqlite", Path: defaultIn(dataDir(), "queue.db")}}
		cfg.Implicit = true
	}
	return cfg, cfg.Validate()
}

func loginName() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return os.Getenv("USER")
}

var kinds = []string{"sqlite", "postgres", "lockdir", "notion"}

func (c *Config) Validate() error {
	var problems []string
	if err := model.CheckCallerName("actor", c.Actor); err != nil {
		problems = append(problems, err.Error())
	}
	for i, cl := range c.MCP.Clients {
		if err := model.CheckCallerName(fmt.Sprintf("mcp.clients[%d].name", i), cl.Name); err != nil {
			problems = append(problems, err.Error())
		}
	}
	seen := map[string]bool{}
	for i, s := range c.Sources {
		where := fmt.Sprintf("sources[%d]", i)
		if s.Name == "" {
			problems = append(problems, where+": no name")
		} else if seen[s.Name] {
			problems = append(problems, where+": the name "+s.Name+" is used twice")
		}
		seen[s.Name] = true
		problems = append(problems, s.relayProblems(where)...)
		if s.Kind == "notion" {
			if _, err := notion.CheckVersion(s.NotionAPIVersion()); err != nil {
				problems = append(problems, fmt.Sprintf("%s (%s): %v", where, s.Name, err))
			}
		}
		problems = append(problems, s.secretProblems(where)...)
		if !slices.Contains(kinds, s.Kind) {
			p := fmt.Sprintf("%s (%s): kind %q is not one of %s", where, s.Name, s.Kind, strings.Join(kinds, ", "))
			if near := model.Nearest(strings.ToLower(s.Kind), kinds, 3); near != "" {
				p += fmt.Sprintf(" (did you mean %q?)", near)
			}
			problems = append(problems, p)
		}
	}
	l := c.Escalation
	if !(l.StaleAfter > 0 && l.StaleAfter <= l.UrgentAfter && l.UrgentAfter <= l.NotifyAfter && l.NotifyAfter <= l.EscalateAfter) {
		problems = append(problems, "escalation: thresholds must be positive and in order stale ≤ urgent ≤ notify ≤ escalate")
	}
	if c.Lease <= 0 {
		problems = append(problems, "lease must be positive")
	}
	if c.HistoryWindow <= 0 {
		problems = append(problems, "history_window must be positive (how long finished tasks stay on the dashboard, e.g. 24h)")
	}
	if c.LeaseCeiling < 0 {
		problems = append(problems, "lease_ceiling must be 0 (none) or positive: the longest lease an agent may hold, e.g. 24h")
	}
	if c.Grace <= 0 {
		problems = append(problems, "grace must be positive: how long a dead holder's expired lease waits before its task is rescued")
	}
	problems = append(problems, c.Mesh.problems()...)
	if len(problems) > 0 {
		return model.Errorf(model.CodeMisconfigured, "config", "", "%s", strings.Join(problems, "; "))
	}
	return nil
}

// expand resolves ~ and environment variables in a configured path.
func Expand(p string) string {
	p = os.ExpandEnv(p)
	if strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, p[2:])
		}
	}
	return p
}

// NotionAPIVersion is the Notion-Version a notion source speaks as
// configured: api_version, else its older spelling notion_version; ""
// leaves the source's default.
func (s SourceConfig) NotionAPIVersion() string { return cmp.Or(s.APIVersion, s.NotionVersion) }

// dateAsText reads a bare YAML date given where text is wanted
// (api_version: 2026-12-01, which YAML decodes as a time) as the date it
// was written as.
func dateAsText(_, to reflect.Type, data any) (any, error) {
	if t, ok := data.(time.Time); ok && to.Kind() == reflect.String && t.Equal(t.Truncate(24*time.Hour)) {
		return t.Format(time.DateOnly), nil
	}
	return data, nil
}

// SSHConfig is `claimdeck ssh`'s section (docs/ssh.md): --listen and
// --keys win over listen and keys.
type SSHConfig struct {
	Listen      string        `mapstructure:"listen" json:"listen,omitempty"`
	Keys        string        `mapstructure:"keys" json:"keys,omitempty"`
	HostKey     string        `mapstructure:"host_key" json:"host_key,omitempty"`
	MaxSessions int           `mapstructure:"max_sessions" json:"max_sessions,omitempty"`
	MaxAuth     int           `mapstructure:"max_auth_per_minute" json:"max_auth_per_minute,omitempty"`
	IdleTimeout time.Duration `mapstructure:"idle_timeout" json:"idle_timeout,omitempty"`
}

// DataDir is claimdeck's data directory ($XDG_DATA_HOME/claimdeck, else
// ~/.local/share/claimdeck); "" when neither is known.
func DataDir() string { return dataDir() }

// HUPReloads is set by a command whose server reloads on SIGHUP (claimdeck
// ssh): the process's signal watcher then leaves SIGHUP to it.
var HUPReloads atomic.Bool
