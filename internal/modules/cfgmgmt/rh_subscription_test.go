package cfgmgmt

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/modules/coretest"
)

// rhExamples are cloud-init 22.4's own examples (cc_rh_subscription's
// meta).
var rhExamples = []string{`rh_subscription:
    username: joe@foo.bar
    ## Quote your password if it has symbols to be safe
    password: '1234abcd'
`, `rh_subscription:
    activation-key: foobar
    org: 12345
`, `rh_subscription:
    activation-key: foobar
    org: 12345
    auto-attach: true
    service-level: self-support
    add-pool:
      - 1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a
      - 2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b
    enable-repo:
      - repo-id-to-enable
      - other-repo-id-to-enable
    disable-repo:
      - repo-id-to-disable
      - other-repo-id-to-disable
    # Alter the baseurl in /etc/rhsm/rhsm.conf
    rhsm-baseurl: http://url
    # Alter the server hostname in /etc/rhsm/rhsm.conf
    server-hostname: foo.bar.com
`}

// submanRule is a subscription-manager rule.
func submanRule(out string, rc int, args ...string) ocRule {
	return ocRule{Argv: append([]string{"subscription-manager"}, args...), Out: out, RC: rc}
}

// rhSetup is an unregistered system whose subscription-manager answers
// the lists and registers.
func rhSetup(extra ...ocRule) ocSetup {
	rules := append(extra,
		submanRule("", 1, "identity"),
		submanRule("The system has been registered with ID: 5e1c8e5a-0f1a\nThe registered system name is: node1\n", 0, "register"),
		submanRule("1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a\n2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b\n3c3c\n", 0, "list", "--available", "--pool-only"),
		submanRule("3c3c\n", 0, "list", "--consumed", "--pool-only"),
		submanRule("+----+\n    Available Repositories\n+----+\nRepo ID:   repo-id-to-disable\nRepo Name: A\n\nRepo ID:   other-repo-id-to-enable\nRepo Name: B\n", 0, "repos", "--list-enabled"),
		submanRule("Repo ID:   repo-id-to-enable\nRepo Name: C\n", 0, "repos", "--list-disabled"),
	)
	return ocSetup{rules: rules}
}

// dropCmd is a known difference: cloud-init runs a command earlyinit does
// not.
func dropCmd(argv ...string) func([]ocEvent, map[string]ocFile) []ocEvent {
	return func(evs []ocEvent, _ map[string]ocFile) []ocEvent {
		var out []ocEvent
		for _, ev := range evs {
			if !reflect.DeepEqual(ev.Argv, argv) {
				out = append(out, ev)
			}
		}
		return out
	}
}

// TestRhSubscriptionOracle: earlyinit's rh_subscription runs
// subscription-manager as cloud-init 22.4's cc_rh_subscription does. Where
// 22.4 only logs a warning (bad keys, a failed registration, pools not
// available), earlyinit fails the module after the same commands.
func TestRhSubscriptionOracle(t *testing.T) {
	runOracleCases(t, "rh_subscription", "cc_rh_subscription", []ocCase{
		{name: "example 1", cfg: rhExamples[0], setup: rhSetup()},
		{name: "example 2", cfg: rhExamples[1], setup: rhSetup()},
		{name: "example 3", cfg: rhExamples[2], setup: rhSetup()},
		{name: "registered", cfg: rhExamples[2], setup: rhSetup(submanRule("system identity: x", 0, "identity"))},
		{name: "not configured", cfg: "rh_subscription:\n  username: joe\n  org: 1\n", setup: rhSetup()},
		{name: "key without org", cfg: "rh_subscription:\n  activation-key: k\n", setup: rhSetup(), ourErr: true},
		{name: "bad key", cfg: "rh_subscription:\n  username: u\n  password: p\n  pools: [x]\n", setup: rhSetup(), ourErr: true},
		{name: "service-level without auto-attach", cfg: "rh_subscription:\n  activation-key: k\n  org: 1\n  service-level: premium\n", setup: rhSetup(), ourErr: true},
		{name: "auto-attach not a boolean", cfg: "rh_subscription:\n  activation-key: k\n  org: 1\n  auto-attach: maybe\n", setup: rhSetup(), ourErr: true},
		{name: "auto-attach string false", cfg: "rh_subscription:\n  activation-key: k\n  org: 1\n  auto-attach: 'false'\n", setup: rhSetup(),
			known: dropCmd("subscription-manager", "attach", "--auto")},
		{name: "registration fails", cfg: rhExamples[0], setup: rhSetup(submanRule("", 70, "register")), ourErr: true},
		{name: "attach fails", cfg: "rh_subscription:\n  activation-key: k\n  org: 1\n  auto-attach: true\n", setup: rhSetup(submanRule("", 1, "attach")), ourErr: true},
		{name: "pools consumed or missing", cfg: "rh_subscription:\n  activation-key: k\n  org: 1\n  add-pool: [3c3c, 1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a, nosuch]\n", setup: rhSetup(), ourErr: true},
		{name: "repos unchanged", cfg: "rh_subscription:\n  activation-key: k\n  org: Default_Org\n  enable-repo: [other-repo-id-to-enable]\n  disable-repo: [repo-id-to-enable]\n", setup: rhSetup(),
			known: dropCmd("subscription-manager", "repos")},
		// Its keys are checked only once the system is known not to be
		// registered: a registered one ignores bad keys.
		{name: "registered, bad keys", cfg: "rh_subscription:\n  activation-key: k\n  org: 1\n  pools: [x]\n  auto-attach: maybe\n  add-pool: abc\n",
			setup: rhSetup(submanRule("system identity: x", 0, "identity"))},
		{name: "password false", cfg: "rh_subscription:\n  username: joe\n  password: 0\n", setup: rhSetup()},
		{name: "add-pool not a list", cfg: "rh_subscription:\n  activation-key: k\n  org: 1\n  add-pool: abc\n", setup: rhSetup(), ourErr: true},
	})
}

// TestRhSubscriptionSecretsNotShown: the password and the activation key
// reach subscription-manager (in its argv: it takes them nowhere else)
// and nothing else: not the log, the output log, an error.
func TestRhSubscriptionSecretsNotShown(t *testing.T) {
	for _, c := range []struct{ cfg, secret, arg string }{
		{"rh_subscription: {username: joe, password: 'Pa55:w0rd', server-hostname: 'https://u:p4ss@sat.example.org'}", "Pa55:w0rd", "--password=Pa55:w0rd"},
		{"rh_subscription: {activation-key: AK-s3cr3t, org: 7}", "AK-s3cr3t", "--activationkey=AK-s3cr3t"},
	} {
		te := coretest.NewEnv(t, c.cfg)
		te.Fake.Handlers["subscription-manager"] = func(cmd core.Cmd) ([]byte, error) {
			switch cmd.Args[0] {
			case "identity":
				return []byte("This system is not yet registered.\n"), coretest.ExitErr(1)
			case "register":
				return []byte("Invalid credentials.\n"), &core.CmdError{Name: "subscription-manager", Err: coretest.ExitErr(70), Tail: "Invalid credentials."}
			}
			return nil, nil
		}
		err := te.RunFunc(RHSubscription)
		if err == nil {
			t.Fatalf("%s: no error", c.cfg)
		}
		if !strings.Contains(strings.Join(te.Calls(), "\n"), c.arg) {
			t.Errorf("%s: subscription-manager did not get %s: %q", c.cfg, c.arg, te.Calls())
		}
		for _, s := range []string{te.LogBuf.String(), te.OutBuf.String(), err.Error()} {
			if strings.Contains(s, c.secret) || strings.Contains(s, "p4ss") {
				t.Errorf("%s: the secret is shown: %q", c.cfg, s)
			}
		}
		var ee coretest.ExitErr
		if !errors.As(err, &ee) || ee != 70 {
			t.Errorf("the exit status is lost: %v", err)
		}
	}
}
