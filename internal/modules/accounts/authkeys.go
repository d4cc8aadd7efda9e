package accounts

import "strings"

// cloud-init's ssh_util.AuthKeyLineParser and update_authorized_keys: the
// ssh module writes authorized_keys with them, ssh_authkey_fingerprints
// reads them.

// authKeyLine is ssh_util.AuthKeyLine: an authorized_keys line (src) and
// its parts, all "" for a blank, comment or unparsable one.
type authKeyLine struct {
	src, keytype, base64, comment, options string
}

func (k authKeyLine) valid() bool { return k.keytype != "" && k.base64 != "" }

// String is AuthKeyLine.__str__: a key's fields single-spaced, anything
// else as it was.
func (k authKeyLine) String() string {
	var toks []string
	for _, t := range []string{k.options, k.keytype, k.base64, k.comment} {
		if t != "" {
			toks = append(toks, t)
		}
	}
	if len(toks) == 0 {
		return k.src
	}
	return strings.Join(toks, " ")
}

// sshValidKeyTypes is ssh_util.VALID_KEY_TYPES.
func sshValidKeyType(t string) bool {
	switch t {
	case "dsa", "rsa", "ecdsa", "ed25519",
		"ecdsa-sha2-nistp256-cert-v01@openssh.com", "ecdsa-sha2-nistp256",
		"ecdsa-sha2-nistp384-cert-v01@openssh.com", "ecdsa-sha2-nistp384",
		"ecdsa-sha2-nistp521-cert-v01@openssh.com", "ecdsa-sha2-nistp521",
		"sk-ecdsa-sha2-nistp256-cert-v01@openssh.com", "sk-ecdsa-sha2-nistp256@openssh.com",
		"sk-ssh-ed25519-cert-v01@openssh.com", "sk-ssh-ed25519@openssh.com",
		"ssh-dss-cert-v01@openssh.com", "ssh-dss",
		"ssh-ed25519-cert-v01@openssh.com", "ssh-ed25519",
		"ssh-rsa-cert-v01@openssh.com", "ssh-rsa",
		"ssh-xmss-cert-v01@openssh.com", "ssh-xmss@openssh.com":
		return true
	}
	return false
}

// parseAuthKeyLine is ssh_util.AuthKeyLineParser.parse: "type base64
// [comment]", or options (up to the first blank outside double quotes)
// before it.
func parseAuthKeyLine(src string) authKeyLine {
	line := strings.TrimRight(src, "\r\n")
	if strings.HasPrefix(line, "#") || strings.TrimFunc(line, pyIsSpace) == "" {
		return authKeyLine{src: src}
	}
	ent := strings.TrimFunc(line, pyIsSpace)
	parse := func(s string) (authKeyLine, bool) {
		toks := pySplitN(s, 3)
		if len(toks) < 2 || !sshValidKeyType(toks[0]) {
			return authKeyLine{}, false
		}
		k := authKeyLine{src: src, keytype: toks[0], base64: toks[1]}
		if len(toks) == 3 {
			k.comment = toks[2]
		}
		return k, true
	}
	if k, ok := parse(ent); ok {
		return k
	}
	opts, remain := extractKeyOptions(ent)
	if k, ok := parse(remain); ok {
		k.options = opts
		return k
	}
	return authKeyLine{src: src}
}

// extractKeyOptions is AuthKeyLineParser._extract_options: the text up to
// the first space or tab outside double quotes, and the rest, left-trimmed.
func extractKeyOptions(ent string) (string, string) {
	quoted := false
	i := 0
	for i < len(ent) && (quoted || (ent[i] != ' ' && ent[i] != '\t')) {
		if i+1 >= len(ent) {
			i++
			break
		}
		switch c, next := ent[i], ent[i+1]; {
		case c == '\\' && next == '"':
			i++
		case c == '"':
			quoted = !quoted
		}
		i++
	}
	return ent[:i], strings.TrimLeftFunc(ent[i:], pyIsSpace)
}

// updateAuthorizedKeys is ssh_util.update_authorized_keys: each old line
// holding a key of the same base64 as one of add is replaced by it (the
// last such), the other keys of add are appended, and every key line is
// written as AuthKeyLine writes it. Unlike cloud-init, a key given twice
// is appended once.
func updateAuthorizedKeys(old []string, add []authKeyLine) []string {
	placed := map[string]bool{}
	out := make([]string, 0, len(old)+len(add))
	for _, l := range old {
		ent := parseAuthKeyLine(l)
		if ent.valid() {
			for _, k := range add {
				if k.base64 == ent.base64 {
					ent = k
					placed[k.base64] = true
				}
			}
		}
		out = append(out, ent.String())
	}
	for _, k := range add {
		if !placed[k.base64] {
			placed[k.base64] = true
			out = append(out, k.String())
		}
	}
	return out
}
