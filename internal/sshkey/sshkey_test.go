package sshkey

import (
	"crypto/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// keygen runs OpenSSH's ssh-keygen, the reference every key here is read
// back with (make deps installs openssh-client).
func keygen(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Fatal("no ssh-keygen to check keys against: make deps installs openssh-client")
	}
	cmd := exec.Command("ssh-keygen", args...)
	cmd.Env = append(os.Environ(), "LANG=C")
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("ssh-keygen %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestKeysAsOpenSSHReadsThem: for each type, OpenSSH's ssh-keygen reads
// the private file (derives the same public key and comment), gives the
// public file the fingerprint and randomart Report prints, and a
// signature made with the private key verifies with the public one (for
// RSA that checks the CRT parameters too).
func TestKeysAsOpenSSHReadsThem(t *testing.T) {
	dir := t.TempDir()
	for _, typ := range Types {
		t.Run(typ, func(t *testing.T) {
			k, err := Generate(typ, "root@earlyinit-test", rand.Reader)
			if err != nil {
				t.Fatal(err)
			}
			f := filepath.Join(dir, "ssh_host_"+typ+"_key")
			if err := os.WriteFile(f, k.Private, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(f+".pub", k.Public, 0o644); err != nil {
				t.Fatal(err)
			}
			if got := keygen(t, "", "-y", "-f", f); got != string(k.Public) {
				t.Errorf("ssh-keygen -y: %q, the public file %q", got, k.Public)
			}
			// "BITS SHA256:... COMMENT (TYPE)" then the randomart.
			want := strconv.Itoa(k.Bits) + " " + k.Fingerprint() + " root@earlyinit-test (" + k.keygenName() + ")\n" + k.Randomart()
			if got := keygen(t, "", "-l", "-v", "-f", f+".pub"); got != want {
				t.Errorf("ssh-keygen -lv:\n%s\nearlyinit:\n%s", got, want)
			}
			if got := keygen(t, "", "-l", "-v", "-f", f); got != want {
				t.Errorf("ssh-keygen -lv of the private file:\n%s\nearlyinit:\n%s", got, want)
			}
			data := filepath.Join(dir, typ+".data")
			if err := os.WriteFile(data, []byte("signed by "+typ), 0o644); err != nil {
				t.Fatal(err)
			}
			keygen(t, "", "-Y", "sign", "-f", f, "-n", "file", data)
			keygen(t, "signed by "+typ, "-Y", "check-novalidate", "-n", "file", "-f", f+".pub", "-s", data+".sig")
			if typ == "rsa" {
				// OpenSSL checks what OpenSSH does not (it recomputes a
				// wrong CRT result): the key re-saved as PKCS#1 keeps
				// earlyinit's p, q and iqmp, and `openssl rsa -check`
				// verifies them.
				pem := filepath.Join(dir, "pkcs1")
				if err := os.WriteFile(pem, k.Private, 0o600); err != nil {
					t.Fatal(err)
				}
				keygen(t, "", "-p", "-P", "", "-N", "", "-m", "PEM", "-f", pem)
				out, err := exec.Command("openssl", "rsa", "-check", "-noout", "-in", pem).CombinedOutput()
				if err != nil || string(out) != "RSA key ok\n" {
					t.Errorf("openssl rsa -check: %v\n%s", err, out)
				}
			}
			rep := k.Report(f)
			if !strings.HasPrefix(rep, "Generating public/private "+typ+" key pair.\nYour identification has been saved in "+f+"\n") ||
				!strings.HasSuffix(rep, "The key fingerprint is:\n"+k.Fingerprint()+" root@earlyinit-test\nThe key's randomart image is:\n"+k.Randomart()) {
				t.Errorf("report:\n%s", rep)
			}
		})
	}
}

// TestReportAsSshKeygen: ssh-keygen's own words when it makes a key
// (OpenSSH 9.2, LANG=C), with its fingerprint and randomart in place of
// the ones it drew, against Report's for a key of the same type.
func TestReportAsSshKeygen(t *testing.T) {
	dir := t.TempDir()
	for _, typ := range Types {
		f := filepath.Join(dir, typ)
		out := keygen(t, "", "-t", typ, "-N", "", "-C", "root@x", "-f", f)
		pub, err := os.ReadFile(f + ".pub")
		if err != nil {
			t.Fatal(err)
		}
		fp := strings.Fields(keygen(t, "", "-l", "-f", f+".pub"))[1]
		art := strings.SplitN(keygen(t, "", "-l", "-v", "-f", f+".pub"), "\n", 2)[1]
		k, err := Generate(typ, "root@x", rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		want := strings.Replace(strings.Replace(out, fp, k.Fingerprint(), 1), art, k.Randomart(), 1)
		if got := k.Report(f); got != want {
			t.Errorf("%s: ssh-keygen says\n%s\nearlyinit\n%s", typ, want, got)
		}
		if typ := strings.Fields(string(pub))[0]; typ != strings.Fields(string(k.Public))[0] {
			t.Errorf("ssh-keygen's public key is %s, earlyinit's %s", typ, strings.Fields(string(k.Public))[0])
		}
	}
}

func TestRefusals(t *testing.T) {
	if _, err := Generate("dsa", "c", rand.Reader); err == nil || !strings.Contains(err.Error(), `"dsa"`) {
		t.Errorf("dsa: %v", err)
	}
	if _, err := Generate("ed25519", "a\nb", rand.Reader); err == nil {
		t.Error("a comment with a line break is accepted")
	}
}

func BenchmarkGenerate(b *testing.B) {
	for _, typ := range Types {
		b.Run(typ, func(b *testing.B) {
			for b.Loop() {
				if _, err := Generate(typ, "root@bench", rand.Reader); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
