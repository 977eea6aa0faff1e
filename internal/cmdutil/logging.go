package cmdutil

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/claimdeck/claimdeck/model"
)

// Logging is off unless asked for: --debug, or CLAIMDECK_LOG=debug|info|
// warn|error. It goes to stderr as log/slog's text, never to stdout (the
// answer), and every message and value passes through model.Redact, with
// secret-named attributes dropped whole.

const envLog = "CLAIMDECK_LOG"

// setupLog returns the command's logger: a discarding one unless logging
// was asked for.
func (a *Env) setupLog() (*slog.Logger, error) {
	level, on := slog.LevelDebug, a.debug
	if v := strings.TrimSpace(os.Getenv(envLog)); v != "" && !a.debug {
		if err := level.UnmarshalText([]byte(v)); err != nil {
			return nil, model.Errorf(model.CodeMisconfigured, "", "", "$%s=%q: want debug, info, warn or error", envLog, v)
		}
		on = true
	}
	if !on {
		return slog.New(slog.DiscardHandler), nil
	}
	return NewLog(a.Stderr, level), nil
}

func NewLog(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(redacting{slog.NewTextHandler(w, &slog.HandlerOptions{Level: level})})
}

// redacting passes records to h with secrets removed.
type redacting struct{ h slog.Handler }

func (r redacting) Enabled(ctx context.Context, l slog.Level) bool { return r.h.Enabled(ctx, l) }

func (r redacting) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, model.Redact(rec.Message), rec.PC)
	rec.Attrs(func(at slog.Attr) bool {
		out.AddAttrs(redactAttr(at))
		return true
	})
	return r.h.Handle(ctx, out)
}

func (r redacting) WithAttrs(as []slog.Attr) slog.Handler {
	clean := make([]slog.Attr, len(as))
	for i, at := range as {
		clean[i] = redactAttr(at)
	}
	return redacting{r.h.WithAttrs(clean)}
}

func (r redacting) WithGroup(name string) slog.Handler { return redacting{r.h.WithGroup(name)} }

func redactAttr(at slog.Attr) slog.Attr {
	if model.SecretName(at.Key) {
		return slog.String(at.Key, model.Redacted)
	}
	v := at.Value.Resolve()
	switch v.Kind() {
	case slog.KindGroup:
		g := v.Group()
		clean := make([]any, len(g))
		for i, sub := range g {
			clean[i] = redactAttr(sub)
		}
		return slog.Group(at.Key, clean...)
	case slog.KindString, slog.KindAny:
		return slog.String(at.Key, model.Redact(v.String()))
	}
	return slog.Attr{Key: at.Key, Value: v}
}

type logKey struct{}

func withLog(ctx context.Context, l *slog.Logger) context.Context {
	if ctx == nil {
		ctx = context.Background()
	}
	return context.WithValue(ctx, logKey{}, l)
}

// logOf is the command's logger, or one that discards.
func logOf(ctx context.Context) *slog.Logger {
	if ctx != nil {
		if l, ok := ctx.Value(logKey{}).(*slog.Logger); ok {
			return l
		}
	}
	return slog.New(slog.DiscardHandler)
}

// personalOutput applies a person's default output (output: in the
// configuration, or CLAIMDECK_OUTPUT) when -o was not given: table only
// where a table is offered, JSON everywhere else.
func (a *Env) personalOutput(cmd *cobra.Command, cfg *Config) error {
	if cmd.Flags().Changed("output") || cfg.Output == "" {
		return nil
	}
	switch cfg.Output {
	case "json":
		return nil
	case "table":
	default:
		return model.Errorf(model.CodeMisconfigured, "", "", "output %q (the configuration's output: or $CLAIMDECK_OUTPUT): want json or table", cfg.Output)
	}
	a.Output = "table"
	if a.checkOutput(cmd) != nil {
		a.Output = "json" // JSON only here: the default does not apply
	}
	return nil
}
