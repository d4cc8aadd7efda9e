package azure

import (
	"context"
	"encoding/xml"
	"fmt"
	"strings"
	"time"

	"github.com/earlyinit/earlyinit/internal/httpget"
)

// WireServer is Azure's fabric endpoint (cloud-init's
// DEFAULT_WIRESERVER_ENDPOINT; DHCP option 245 may name another).
const WireServer = "168.63.129.16"

// The wire server's protocol headers, as cloud-init's
// AzureEndpointHttpClient and WALinuxAgent send them.
const (
	AgentName       = "WALinuxAgent"
	protocolVersion = "2012-11-30"
)

// maxGoalState bounds the goal state document.
const maxGoalState = 1 << 20

// readyTimeout bounds a ready report whose context has no deadline
// (cloud-init retries for 20 minutes).
const readyTimeout = 20 * time.Minute

// GoalState is what a health report needs of the wire server's goal state.
type GoalState struct {
	Incarnation, ContainerID, InstanceID string
}

// ParseGoalState reads a goal state document (GET /machine/?comp=goalstate)
// as cloud-init's GoalState does: Incarnation, Container/ContainerId and
// Container/RoleInstanceList/RoleInstance/InstanceId, all required (the
// first of each).
func ParseGoalState(b []byte) (GoalState, error) {
	var doc struct {
		Incarnation []string `xml:"Incarnation"`
		Container   []struct {
			ContainerID []string `xml:"ContainerId"`
			Roles       []struct {
				Instances []struct {
					InstanceID []string `xml:"InstanceId"`
				} `xml:"RoleInstance"`
			} `xml:"RoleInstanceList"`
		} `xml:"Container"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		return GoalState{}, fmt.Errorf("parse goal state: %w", err)
	}
	var gs GoalState
	first := func(l []string) string {
		if len(l) == 0 {
			return ""
		}
		return strings.TrimSpace(l[0])
	}
	gs.Incarnation = first(doc.Incarnation)
	if len(doc.Container) > 0 {
		c := doc.Container[0]
		gs.ContainerID = first(c.ContainerID)
		if len(c.Roles) > 0 && len(c.Roles[0].Instances) > 0 {
			gs.InstanceID = first(c.Roles[0].Instances[0].InstanceID)
		}
	}
	for _, f := range []struct{ v, name string }{
		{gs.ContainerID, "Container/ContainerId"},
		{gs.InstanceID, "Container/RoleInstanceList/RoleInstance/InstanceId"},
		{gs.Incarnation, "Incarnation"},
	} {
		if f.v == "" {
			return GoalState{}, fmt.Errorf("goal state: missing %s", f.name)
		}
	}
	return gs, nil
}

// healthTemplate is cloud-init's HEALTH_REPORT_XML_TEMPLATE: incarnation,
// container id, instance id, state, then the details subsection ("" for
// Ready).
const healthTemplate = `<?xml version="1.0" encoding="utf-8"?>
<Health xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
 xmlns:xsd="http://www.w3.org/2001/XMLSchema">
  <GoalStateIncarnation>%s</GoalStateIncarnation>
  <Container>
    <ContainerId>%s</ContainerId>
    <RoleInstanceList>
      <Role>
        <InstanceId>%s</InstanceId>
        <Health>
          <State>%s</State>
          %s
        </Health>
      </Role>
    </RoleInstanceList>
  </Container>
</Health>
`

// HealthReport is the "Ready" health report for gs, byte for byte as
// cloud-init's GoalStateHealthReporter builds it (values XML-escaped).
func HealthReport(gs GoalState) []byte {
	esc := func(s string) string {
		var b strings.Builder
		xml.EscapeText(&b, []byte(s))
		return b.String()
	}
	return []byte(fmt.Sprintf(healthTemplate, esc(gs.Incarnation), esc(gs.ContainerID), esc(gs.InstanceID), "Ready", ""))
}

// reporter tells Azure's fabric that provisioning is done: without it,
// Azure marks the VM's provisioning failed (after some 40 minutes).
type reporter struct {
	// Endpoint is the wire server's address; "" means WireServer.
	Endpoint string
	// HTTP makes the requests; nil means an httpget.Getter with
	// RequestTimeout and no retries of its own (Report retries).
	HTTP httpget.Fetcher
	// RequestTimeout bounds each request when HTTP is nil; 0 means 5 s.
	RequestTimeout time.Duration
	// Wait is the pause between attempts; 0 means 1 s (cloud-init's).
	Wait time.Duration
	// Logf, if set, is told of failed attempts and of the report.
	Logf func(format string, args ...any)
}

// Report fetches the goal state and posts the Ready health report for
// it, as cloud-init's WALinuxAgentShim.register_with_azure_and_fetch_data
// does (without the certificates: keys come from IMDS or ovf-env.xml).
// Any failure is tried again, both steps, after Wait, until ctx is done
// (or readyTimeout when ctx has no deadline); the last error is returned.
func (r *reporter) Report(ctx context.Context) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, readyTimeout)
		defer cancel()
	}
	ep := r.Endpoint
	if ep == "" {
		ep = WireServer
	}
	g := r.HTTP
	if g == nil {
		t := r.RequestTimeout
		if t <= 0 {
			t = 5 * time.Second
		}
		g = &httpget.Getter{RequestTimeout: t, Retries: -1}
	}
	wait := r.Wait
	if wait <= 0 {
		wait = time.Second
	}
	// why is the last attempt's failure, unless the deadline cut that
	// attempt short: then the one before it says why better.
	var why error
	for attempt := 1; ; attempt++ {
		err := r.once(ctx, g, ep)
		if err == nil {
			r.log("azure: reported ready to the fabric at %s", ep)
			return nil
		}
		r.log("azure: ready report, attempt %d: %v", attempt, err)
		if why == nil || ctx.Err() == nil {
			why = err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("azure: ready report to %s: %w (gave up: %v)", ep, why, ctx.Err())
		case <-t.C:
		}
	}
}

func (r *reporter) once(ctx context.Context, g httpget.Fetcher, ep string) error {
	hdr := map[string]string{"x-ms-agent-name": AgentName, "x-ms-version": protocolVersion}
	u := "http://" + ep + "/machine/?comp=goalstate"
	b, err := g.Get(ctx, httpget.Request{URL: u, Header: hdr, Limit: maxGoalState})
	if err != nil {
		return err
	}
	gs, err := ParseGoalState(b)
	if err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	post := map[string]string{"Content-Type": "text/xml; charset=utf-8"}
	for k, v := range hdr {
		post[k] = v
	}
	_, err = g.Get(ctx, httpget.Request{Method: "POST", URL: "http://" + ep + "/machine?comp=health", Header: post, Body: HealthReport(gs), Limit: maxGoalState})
	return err
}

func (r *reporter) log(format string, args ...any) {
	if r.Logf != nil {
		r.Logf(format, args...)
	}
}
