package netcfg

import (
	"errors"
	"fmt"

	"go.yaml.in/yaml/v3"

	"github.com/earlyinit/earlyinit/internal/netcfg/yamlread"
)

// yamlBudget bounds the nodes visited, aliases included, so that an alias
// bomb cannot make the parser walk an exponential tree.
const yamlBudget = 1 << 16

// yparser is the state of one network-config parse.
type yparser struct {
	*yamlread.Reader
	// macToName names v2 ethernets matched by MAC without set-name, as
	// cloud-init does from the live system. May be nil.
	macToName map[string]string
	// ignored are the key paths read but not kept (Config.Ignored).
	ignored []string
}

// parseYAML parses network config version 1 or 2 (cloud-init's
// network-config), with or without the top-level "network:" key.
// `config: disabled` (under "network:" or at the top) gives a Config with
// Disabled set. Errors name the key path and line: `network-config: line 7:
// ethernets.eth0.addresses[1]: "10.0.0.300/24": invalid IP`.
//
// v2 is interpreted as cloud-init's network_state does (see parseV2), with
// macToName as the live system: a v2 ethernet is named by set-name, else by
// the name macToName gives its MAC, else by its id.
func parseYAML(data []byte, macToName map[string]string) (*Config, error) {
	p := &yparser{Reader: yamlread.New(yamlBudget), macToName: macToName}
	c, err := p.parse(data)
	if err != nil {
		return nil, fmt.Errorf("network-config: %w", err)
	}
	if !c.Disabled {
		c.Ignored = append(c.Ignored, p.ignored...)
	}
	return c, nil
}

func (p *yparser) parse(data []byte) (*Config, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, errors.New("empty document")
	}
	root := doc.Content[0]
	top, err := p.Mapping(root, "")
	if err != nil {
		return nil, err
	}
	path := ""
	if n := yamlread.Get(top, "network"); n != nil {
		path = "network"
		if top, err = p.Mapping(n, path); err != nil {
			return nil, err
		}
		root = n
	}
	if n := yamlread.Get(top, "config"); n != nil {
		if n, err := p.Node(n); err == nil && n.Kind == yaml.ScalarNode && n.Value == "disabled" {
			return &Config{Disabled: true}, nil
		}
	}
	vn := yamlread.Get(top, "version")
	if vn == nil {
		return nil, yamlread.Errorf(root, path, "no version")
	}
	v, vnode, err := p.Scalar(vn, yamlread.Join(path, "version"))
	if err != nil {
		return nil, err
	}
	switch v {
	case "1":
		cn := yamlread.Get(top, "config")
		if cn == nil {
			return nil, yamlread.Errorf(root, path, "version 1 without config")
		}
		return p.parseV1(cn, yamlread.Join(path, "config"))
	case "2":
		return p.parseV2(top, path)
	}
	return nil, yamlread.Errorf(vnode, yamlread.Join(path, "version"), "unsupported version %q", v)
}
