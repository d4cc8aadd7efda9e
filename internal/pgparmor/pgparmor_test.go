package pgparmor

import (
	"bytes"
	"encoding/base64"
	"os/exec"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/oracle"
)

// armor wraps body as gpg --armor does: 64 columns, a blank line after
// the headers, the CRC-24 line.
func armor(body []byte, headers string) string {
	enc := base64.StdEncoding.EncodeToString(body)
	var b strings.Builder
	b.WriteString("-----BEGIN PGP PUBLIC KEY BLOCK-----\n" + headers + "\n")
	for len(enc) > 64 {
		b.WriteString(enc[:64] + "\n")
		enc = enc[64:]
	}
	c := crc24(body)
	b.WriteString(enc + "\n=" + base64.StdEncoding.EncodeToString([]byte{byte(c >> 16), byte(c >> 8), byte(c)}) + "\n")
	b.WriteString("-----END PGP PUBLIC KEY BLOCK-----\n")
	return b.String()
}

// TestDearmorAsGPG: for each block, Dearmor gives what `gpg --dearmor`
// writes when gpg exits 0, and an error when gpg fails. cloud-init's apt
// module (22.4, gpg.dearmor) runs gpg --dearmor and refuses the key on a
// non-zero exit.
func TestDearmorAsGPG(t *testing.T) {
	gpg, err := exec.LookPath("gpg")
	if err != nil {
		t.Fatal("no gpg, the reference: make deps installs gnupg")
	}
	cases := gpgCases()
	var read, refused int
	for name, text := range cases {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(gpg, "--batch", "--no-options", "--homedir", t.TempDir(), "--dearmor")
			cmd.Stdin = strings.NewReader(text)
			want, gerr := cmd.Output()
			got, err := Dearmor(text)
			if gerr == nil {
				read++
			} else {
				refused++
			}
			switch {
			case gerr != nil && err == nil:
				t.Errorf("gpg refuses it (%v) and Dearmor reads %d bytes", gerr, len(got))
			case gerr == nil && err != nil:
				t.Errorf("gpg reads %d bytes and Dearmor refuses it: %v", len(want), err)
			case gerr == nil && !bytes.Equal(got, want):
				t.Errorf("Dearmor read %d bytes, gpg %d, not the same", len(got), len(want))
			}
		})
	}
	if read < 5 || refused < 5 {
		t.Errorf("gpg read %d of the blocks and refused %d: the cases no longer test both", read, refused)
	}
}

// gpgCases are armoured blocks gpg reads and blocks it refuses, by name.
func gpgCases() map[string]string {
	body := make([]byte, 300)
	for i := range body {
		body[i] = byte(i*7 + 3)
	}
	good := armor(body, "")
	sumAt := strings.LastIndex(good, "\n=") + 1
	sumLine := good[sumAt : sumAt+6] // "=XXXX\n"
	const end = "-----END PGP PUBLIC KEY BLOCK-----\n"
	return map[string]string{
		"plain":               good,
		"headers":             armor(body, "Version: GnuPG v2\nComment: a key\n"),
		"crlf":                strings.ReplaceAll(good, "\n", "\r\n"),
		"text before":         "a key for the corp mirror\n\n" + good,
		"indented":            indent(good, "    "),
		"body indented":       strings.ReplaceAll(good, "\n", "\n  ")[:len(good)+2*strings.Count(good, "\n")-2],
		"trailing spaces":     strings.ReplaceAll(good, "\n", "  \n"),
		"no checksum":         strings.Replace(good, sumLine, "", 1),
		"bad checksum":        strings.Replace(good, sumLine, "=AAAA\n", 1),
		"short checksum":      strings.Replace(good, sumLine, "=AB\n", 1),
		"body damaged":        damage(good),
		"no end":              strings.Replace(good, end, "", 1),
		"no end, no checksum": strings.Replace(strings.Replace(good, end, "", 1), sumLine, "", 1),
		"other end":           strings.Replace(good, end, "-----END PGP SIGNATURE-----\n", 1),
		"no empty line":       strings.Replace(good, "-----\n\n", "-----\n", 1),
		"two blocks":          good + armor(body[:40], ""),
		"no armor":            base64.StdEncoding.EncodeToString(body),
		"short body":          armor(body[:1], ""),
		"empty":               "",
	}
}

// TestDearmorAsCloudInit: cloud-init 22.4's apt module (apt_key add,
// hardened, as a source's key is added) writes the key file gpg
// --dearmor gives and writes none when gpg fails: Dearmor reads what it
// writes and refuses what it does not write.
func TestDearmorAsCloudInit(t *testing.T) {
	cases := gpgCases()
	var out map[string]*string // base64 of the file written, or null
	oracle.Run(t, `import base64, tempfile
from cloudinit.config import cc_apt_configure as a
from cloudinit import util
a.CLOUD_INIT_GPG_DIR = tempfile.mkdtemp() + "/"
written = {}
util.write_file = lambda f, c, *x, **k: written.update({f: c})
out = {}
for name, text in json.load(sys.stdin).items():
    written.clear()
    f = a.apt_key("add", output_file="k", data=text, hardened=True)
    out[name] = base64.b64encode(written[f]).decode() if f in written else None
print(json.dumps(out))`, cases, &out)
	if len(out) != len(cases) {
		t.Fatalf("cloud-init answered %d of %d cases", len(out), len(cases))
	}
	written := 0
	for name, text := range cases {
		got, err := Dearmor(text)
		want := out[name]
		if want != nil {
			written++
		}
		switch {
		case want == nil && err == nil:
			t.Errorf("%s: cloud-init writes no key and Dearmor reads %d bytes", name, len(got))
		case want != nil && err != nil:
			t.Errorf("%s: cloud-init writes the key and Dearmor refuses it: %v", name, err)
		case want != nil && base64.StdEncoding.EncodeToString(got) != *want:
			t.Errorf("%s: Dearmor's bytes are not the key cloud-init writes", name)
		}
	}
	if written < 5 || len(cases)-written < 5 {
		t.Errorf("cloud-init wrote %d of the %d keys: the cases no longer test both", written, len(cases))
	}
}

func indent(s, pre string) string {
	return pre + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n"+pre) + "\n"
}

// damage changes one character of the body's first line.
func damage(armored string) string {
	i := strings.Index(armored, "\n\n") + 2
	c := byte('A')
	if armored[i] == 'A' {
		c = 'B'
	}
	return armored[:i] + string(c) + armored[i+1:]
}

func TestCRC24(t *testing.T) {
	// RFC 4880's CRC-24 of "123456789", its check value.
	if got := crc24([]byte("123456789")); got != 0x21CF02 {
		t.Errorf("crc24 = %06X; want 21CF02", got)
	}
}
