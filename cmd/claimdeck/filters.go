package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// saveFilter is the dashboard's :save: it keeps a filter under name in
// the file the configuration came from, or nil when there is none (the
// embedded queue stands in, and a file holding only filters would end it).
func (c *Config) saveFilter() func(name, expr string) error {
	if c.file == "" {
		return nil
	}
	file := c.file
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
