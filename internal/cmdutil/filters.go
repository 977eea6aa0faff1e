package cmdutil

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/claimdeck/claimdeck/model"
	"github.com/claimdeck/claimdeck/sources"
)

// listExtras gives list a --filter in the dashboard's filter language,
// over every source (or --source); node: and level read each task's
// standing as list prints it, from the node health record's last state.
func (a *Env) listExtras(cmd *cobra.Command, tf *TaskFlags) {
	var expr string
	run := cmd.RunE
	cmd.Flags().IntVar(&a.limit, "limit", -1, fmt.Sprintf("show at most this many tasks, first in pull order (0: all; default %d with -o table, all in JSON, which then says \"truncated\" and, where the source counted them, how many \"more\")", DefaultTableLimit))
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if expr == "" {
			return run(cmd, args)
		}
		f, err := model.ParseFilter(expr)
		if err != nil {
			return model.Wrap(model.CodeMisconfigured, "list", "", err)
		}
		standing, err := a.standing()
		if err != nil {
			return err
		}
		_, all, closeSrcs, err := a.readAll(cmd.Context())
		if err != nil {
			return err
		}
		defer closeSrcs()
		an, err := listed(f.Select(all, standing, time.Now()), tf.Status)
		if err != nil {
			return err
		}
		an.classify = standing
		return a.Out().answer(an)
	}
	cmd.Flags().StringVar(&expr, "filter", "", "list what the filter matches in every source (or --source), e.g. 'node:ORACLE_LOCAL level>=stale'; node: and level read the mesh as the node health record (or else the registry) last recorded it (no pings)")
}

// readAll opens every source (or --source) and reads its tasks; byName
// finds a source by name for what follows, and closeAll closes them.
func (a *Env) readAll(ctx context.Context, opts ...sources.PollOption) (byName map[string]sources.Source, all []*model.Task, closeSrcs func(), err error) {
	srcs, err := a.OpenAll(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	byName = map[string]sources.Source{}
	for _, src := range srcs {
		d, err := Retrying(ctx, func() (sources.Delta, error) { return src.Poll(ctx, "", opts...) })
		if err != nil {
			CloseAll(srcs)
			return nil, nil, nil, fmt.Errorf("reading %s: %w", src.Name(), err)
		}
		if _, seen := byName[src.Name()]; seen {
			continue // a moved source, served by a target also configured: read once
		}
		byName[src.Name()] = src
		all = append(all, d.Tasks...)
	}
	return byName, all, func() { CloseAll(srcs) }, nil
}

// saveFilter is the dashboard's :save: it keeps a filter under name in
// the file the configuration came from, or nil when there is none (the
// embedded queue stands in, and a file holding only filters would end it).
func (c *Config) SaveFilter() func(name, expr string) error {
	if c.File == "" {
		return nil
	}
	file := c.File
	return func(name, expr string) error { return writeFilter(file, name, expr) }
}

// writeFilter sets filters.NAME in a YAML configuration file, keeping the
// rest of it (comments included), and replaces the file in one rename so
// a crash leaves the old one or the new one.
func writeFilter(file, name, expr string) error {
	if ext := strings.ToLower(filepath.Ext(file)); ext == ".json" {
		return fmt.Errorf("%s: filters are saved only into a YAML configuration", file)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	if len(doc.Content) == 0 {
		doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return fmt.Errorf("%s: the configuration is not a mapping", file)
	}
	setKey(mappingAt(root, "filters"), name, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: expr})
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return err
	}
	info, err := os.Stat(file)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".claimdeck-config-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename, nothing is there
	if _, err := tmp.Write(out.Bytes()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(info.Mode().Perm()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), file)
}

// mappingAt is the mapping under key in m, made (or made a mapping) when
// it is missing or empty.
func mappingAt(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			if v := m.Content[i+1]; v.Kind != yaml.MappingNode {
				*v = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			}
			return m.Content[i+1]
		}
	}
	v := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
	return v
}

// setKey sets key to v in mapping m, in place when it is there.
func setKey(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
}
