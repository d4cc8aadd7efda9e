package azure

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const (
	gsContainer = "b4c2a3e5-7f21-4c3b-a8d4-2f6e1d0c9b87"
	gsInstance  = "a7f3c1d2-86b4-4e0f-9c2a-5d1b3e7f9a60.vm-azure-1"
)

// wantHealth is cloud-init's HEALTH_REPORT_XML_TEMPLATE (from
// test_azure_helper.py) for the recorded goal state, state Ready, no
// details.
const wantHealth = `<?xml version="1.0" encoding="utf-8"?>
<Health xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
 xmlns:xsd="http://www.w3.org/2001/XMLSchema">
  <GoalStateIncarnation>1</GoalStateIncarnation>
  <Container>
    <ContainerId>` + gsContainer + `</ContainerId>
    <RoleInstanceList>
      <Role>
        <InstanceId>` + gsInstance + `</InstanceId>
        <Health>
          <State>Ready</State>
          ` + `
        </Health>
      </Role>
    </RoleInstanceList>
  </Container>
</Health>
`

func TestParseGoalState(t *testing.T) {
	gs, err := ParseGoalState(readFixture(t, "goalstate.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if gs != (GoalState{Incarnation: "1", ContainerID: gsContainer, InstanceID: gsInstance}) {
		t.Errorf("ParseGoalState = %+v", gs)
	}
	for _, tt := range []struct{ drop, want string }{
		{"<ContainerId>" + gsContainer + "</ContainerId>", "missing Container/ContainerId"},
		{"<InstanceId>" + gsInstance + "</InstanceId>", "missing Container/RoleInstanceList/RoleInstance/InstanceId"},
		{"<Incarnation>1</Incarnation>", "missing Incarnation"},
	} {
		b := strings.Replace(string(readFixture(t, "goalstate.xml")), tt.drop, "", 1)
		if _, err := ParseGoalState([]byte(b)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("without %s: %v, want %q", tt.drop, err, tt.want)
		}
	}
	if _, err := ParseGoalState([]byte("<GoalState>")); err == nil || !strings.Contains(err.Error(), "parse goal state") {
		t.Errorf("broken XML: %v", err)
	}
}

func TestHealthReport(t *testing.T) {
	got := string(HealthReport(GoalState{Incarnation: "1", ContainerID: gsContainer, InstanceID: gsInstance}))
	if got != wantHealth {
		t.Errorf("HealthReport:\n%s\nwant\n%s", got, wantHealth)
	}
	esc := string(HealthReport(GoalState{Incarnation: "1", ContainerID: "a<b>&c", InstanceID: "i"}))
	if !strings.Contains(esc, "<ContainerId>a&lt;b&gt;&amp;c</ContainerId>") {
		t.Errorf("not escaped: %s", esc)
	}
}

// wireServer plays the wire server: the recorded goal state, and the
// health reports it was sent.
type wireServer struct {
	goalState []byte
	// fail answers the first fail goal state requests with 503.
	fail int

	mu      sync.Mutex
	reports []string
	gets    int
	bad     []string // protocol errors
}

func (w *wireServer) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if r.Header.Get("x-ms-agent-name") != "WALinuxAgent" || r.Header.Get("x-ms-version") != "2012-11-30" {
		w.bad = append(w.bad, r.Method+" "+r.URL.String()+": protocol headers missing")
		rw.WriteHeader(http.StatusBadRequest)
		return
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/machine/" && r.URL.RawQuery == "comp=goalstate":
		w.gets++
		if w.gets <= w.fail {
			rw.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		rw.Write(w.goalState)
	case r.Method == http.MethodPost && r.URL.Path == "/machine" && r.URL.RawQuery == "comp=health":
		if ct := r.Header.Get("Content-Type"); ct != "text/xml; charset=utf-8" {
			w.bad = append(w.bad, "health report Content-Type "+ct)
		}
		b, _ := io.ReadAll(r.Body)
		w.reports = append(w.reports, string(b))
	default:
		w.bad = append(w.bad, r.Method+" "+r.URL.String()+": unexpected")
		rw.WriteHeader(http.StatusNotFound)
	}
}

func startWire(t *testing.T, w *wireServer) string {
	srv := httptest.NewServer(w)
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

func TestReport(t *testing.T) {
	for _, tt := range []struct {
		name string
		fail int
	}{
		{"first try", 0},
		{"after two 503s", 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := &wireServer{goalState: readFixture(t, "goalstate.xml"), fail: tt.fail}
			var logs []string
			r := &reporter{Endpoint: startWire(t, w), Wait: time.Millisecond, Logf: func(f string, a ...any) { logs = append(logs, f) }}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := r.Report(ctx); err != nil {
				t.Fatalf("Report: %v", err)
			}
			if len(w.reports) != 1 || w.reports[0] != wantHealth {
				t.Errorf("health reports %q, want one Ready", w.reports)
			}
			if w.gets != tt.fail+1 || len(w.bad) != 0 {
				t.Errorf("%d goal state GETs (want %d), protocol errors %q", w.gets, tt.fail+1, w.bad)
			}
			if len(logs) != tt.fail+1 {
				t.Errorf("logged %q", logs)
			}
		})
	}
}

func TestReportGivesUp(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := l.Addr().String()
	l.Close()
	broken := &wireServer{goalState: []byte(strings.Replace(string(readFixture(t, "goalstate.xml")), "<ContainerId>"+gsContainer+"</ContainerId>", "", 1))}
	for _, tt := range []struct {
		name, endpoint, want string
	}{
		{"no wire server", gone, "connect"},
		{"a goal state without ContainerId", startWire(t, broken), "missing Container/ContainerId"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var attempts int
			r := &reporter{Endpoint: tt.endpoint, Wait: 20 * time.Millisecond, RequestTimeout: 100 * time.Millisecond, Logf: func(string, ...any) { attempts++ }}
			// Room for several attempts on a loaded machine: a deadline
			// that cuts the last one short must not hide why they failed.
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			start := time.Now()
			err := r.Report(ctx)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), tt.endpoint) || !strings.Contains(err.Error(), "gave up") {
				t.Errorf("Report = %v, want an error naming %s and %q", err, tt.endpoint, tt.want)
			}
			if attempts < 2 {
				t.Errorf("%d attempts: not retried", attempts)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("took %v: not bounded by the context", d)
			}
			if len(broken.reports) != 0 {
				t.Errorf("reported %q on a broken goal state", broken.reports)
			}
		})
	}
}

// A deadline that cuts an attempt short does not hide why the attempts
// before it failed: the error names the broken goal state, not only the
// deadline.
func TestReportGivesUpWithTheReason(t *testing.T) {
	broken := []byte(strings.Replace(string(readFixture(t, "goalstate.xml")), "<ContainerId>"+gsContainer+"</ContainerId>", "", 1))
	var gets atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if gets.Add(1) == 1 {
			rw.Write(broken)
			return
		}
		<-r.Context().Done() // the second attempt hangs past the deadline
	}))
	defer srv.Close()
	ep := strings.TrimPrefix(srv.URL, "http://")
	r := &reporter{Endpoint: ep, Wait: time.Millisecond, RequestTimeout: 10 * time.Second, Logf: func(string, ...any) {}}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	err := r.Report(ctx)
	if err == nil || !strings.Contains(err.Error(), "missing Container/ContainerId") || !strings.Contains(err.Error(), "gave up: context deadline exceeded") {
		t.Errorf("Report = %v, want the broken goal state named and the deadline", err)
	}
	if n := gets.Load(); n != 2 {
		t.Errorf("%d goal state GETs, want 2", n)
	}
}
