package system

import (
	"errors"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/modules/coretest"
)

func TestDisableEC2Metadata(t *testing.T) {
	for _, tc := range []struct {
		name, cfg string
		tools     []string
		ipOut     string
		ipErr     error
		want      []string
		wantErr   string
	}{
		{"off", "disable_ec2_metadata: false", []string{"/usr/sbin/ip"}, "", nil, nil, ""},
		{"unset", "packages: []", []string{"/usr/sbin/ip"}, "", nil, nil, ""},
		{"ip", "disable_ec2_metadata: true", []string{"/usr/sbin/ip", "/sbin/ifconfig"}, "", nil,
			[]string{"ip route add prohibit 169.254.169.254"}, ""},
		{"ip in /bin, true as a string", "disable_ec2_metadata: 'yes'", []string{"/bin/ip"}, "", nil,
			[]string{"ip route add prohibit 169.254.169.254"}, ""},
		{"net-tools", "disable_ec2_metadata: true", []string{"/sbin/ifconfig", "/sbin/route"}, "", nil,
			[]string{"route add -host 169.254.169.254 reject"}, ""},
		{"no tool", "disable_ec2_metadata: true", nil, "", nil, nil, "disable_ec2_metadata: neither ip nor ifconfig"},
		{"route there already", "disable_ec2_metadata: true", []string{"/usr/sbin/ip"},
			"RTNETLINK answers: File exists\n", coretest.ExitErr(2), []string{"ip route add prohibit 169.254.169.254"}, ""},
		{"ip fails", "disable_ec2_metadata: true", []string{"/usr/sbin/ip"},
			"RTNETLINK answers: Operation not permitted\n", coretest.ExitErr(2), []string{"ip route add prohibit 169.254.169.254"},
			"disable_ec2_metadata: run ip route add prohibit 169.254.169.254: exit status 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			te := coretest.NewEnv(t, tc.cfg)
			for _, p := range tc.tools {
				te.Write(p, "", 0o755)
			}
			handler := func(core.Cmd) ([]byte, error) { return []byte(tc.ipOut), tc.ipErr }
			te.Fake.Handlers["ip"], te.Fake.Handlers["route"] = handler, handler
			err := te.RunFunc(DisableEC2Metadata)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatal(err)
			case tc.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			}
			te.WantCalls(tc.want...)
			if tc.ipOut != "" && !strings.Contains(te.OutBuf.String(), tc.ipOut) {
				t.Errorf("output log %q lacks the command's output", te.OutBuf.String())
			}
		})
	}
}

func TestDisableEC2MetadataNoExec(t *testing.T) {
	te := coretest.NewEnv(t, "disable_ec2_metadata: true")
	te.Write("/usr/sbin/ip", "", 0o755)
	te.Exec = nil
	if err := te.RunFunc(DisableEC2Metadata); !errors.Is(err, core.ErrNoExec) {
		t.Errorf("error %v, want errNoExec", err)
	}
}
