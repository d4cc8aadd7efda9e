package modules

import (
	"sync"
	"testing"
)

func TestLazyRE(t *testing.T) {
	l := lazyRE{expr: `^[a-z]+$`}
	if l.re != nil {
		t.Fatal("compiled before first use")
	}
	var wg sync.WaitGroup
	got := make([]bool, 8)
	for i := range got {
		wg.Go(func() { got[i] = l.get().MatchString("abc") && !l.get().MatchString("a1") })
	}
	wg.Wait()
	for i, ok := range got {
		if !ok {
			t.Errorf("goroutine %d: wrong match", i)
		}
	}
	if first := l.get(); first != l.re || l.get() != first {
		t.Error("compiled more than once")
	}
}

// TestLazyREsCompile compiles every package-level expression, so that a
// bad one fails here rather than at its first use in a boot.
func TestLazyREsCompile(t *testing.T) {
	for name, l := range map[string]*lazyRE{
		"aptRepoMatch": &aptRepoMatch, "sourceNameRE": &sourceNameRE, "keyidRE": &keyidRE,
		"keyserverRE": &keyserverRE, "ec2AZ": &ec2AZ, "basicMatcher": &basicMatcher,
		"templateType": &templateType, "jinjaName": &jinjaName, "jinjaCondRE": &jinjaCondRE,
		"jinjaStr": &jinjaStr, "shortDevRE": &shortDevRE, "pkgNameRE": &pkgNameRE,
		"pkgVersionRE": &pkgVersionRE, "hashedRE": &hashedRE, "repoIDRE": &repoIDRE,
		"repoKeyRE": &repoKeyRE, "zyppKeyRE": &zyppKeyRE,
	} {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: %v", name, r)
				}
			}()
			l.get()
		}()
	}
}

func TestGPTTypeGUID(t *testing.T) {
	for _, tt := range []struct{ code, want string }{
		{"83", "0fc63daf-8483-4772-8e79-3d69d8477de4"},
		{"8300", "0fc63daf-8483-4772-8e79-3d69d8477de4"},
		{"82", "0657fd6d-a4ab-43c4-84e5-0933c84b4f4f"},
		{"8200", "0657fd6d-a4ab-43c4-84e5-0933c84b4f4f"},
		{"ef00", "c12a7328-f81f-11d2-ba4b-00a0c93ec93b"},
		{"8e00", "e6d6d379-f507-44c2-a23c-238f2a3df928"},
		{"fd00", "a19d880f-05fc-4d3b-a006-743f0f84911e"},
		{"EF00", ""}, // callers lower-case first
		{"0700", ""},
		{"", ""},
	} {
		if got := gptTypeGUID(tt.code); got != tt.want {
			t.Errorf("gptTypeGUID(%q) = %q, want %q", tt.code, got, tt.want)
		}
	}
}

func TestUseraddFlags(t *testing.T) {
	te := newEnv(t, `users:
  - name: svc
    no_log_init: true
    no_user_group: false
    system: true
    shell: /bin/false
`)
	if err := te.runModule("users_groups"); err != nil {
		t.Fatal(err)
	}
	te.wantCalls("useradd svc --no-log-init --shell /bin/false --system -M", "passwd -l -- svc")
}
