package main

// -until provisioned: the time from the kernel's start until the machine is
// provisioned, measured inside the guest, and each tool's own share.
//
// bench-provisioned.service, after ssh.service, polls until user alice
// exists, her key is in her authorized_keys and sshd listens on port 22,
// and writes the guest's uptime then (CLOCK_BOOTTIME, since the kernel
// started) to the console and to the disk. It starts bench-analyze.service,
// which waits for the tool's last stage (cloud-final or earlyinit-final),
// keeps systemd's timestamps of the tools' units and cloud-init's own
// `analyze show` and `analyze blame` (cloud-init variant) or earlyinit's
// boot record and status (read on the host with `earlyinit analyze`), then
// powers the VM off. The user-data has no power_state: the bench powers
// off once everything is kept.

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/earlyinit/earlyinit/internal/late"
	"github.com/earlyinit/earlyinit/internal/vm"
)

const (
	probePoll = "0.25" // seconds between two checks
	probeMax  = 1200   // checks: 300 s
	benchLog  = "/var/log/bench"
)

// listenAwk exits 0 when /proc/net/tcp{,6} lines on its input have a
// socket listening on port 22: local address ending :0016, state 0A.
const listenAwk = `$4 == "0A" && $2 ~ /:0016$/ { found = 1 } END { exit !found }`

// probeScript is bench-provisioned (KEY: alice's key, without quotes).
const probeScript = `#!/bin/sh
# bench: the machine is provisioned when user alice exists, her key is in
# her authorized_keys and sshd listens on port 22. Checked every POLL s,
# MAX times at most; the guest's uptime then (CLOCK_BOOTTIME, since the
# kernel started) goes to the console and LOG/provisioned. Then
# bench-analyze.service, which waits for the tool's last stage.
set -eu
key='KEY'
listening() {
	cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk 'AWK'
}
mkdir -p LOG
i=0
until getent passwd alice >/dev/null && grep -qF "$key" /home/alice/.ssh/authorized_keys 2>/dev/null && listening; do
	i=$((i + 1))
	if [ "$i" -ge MAX ]; then
		up=$(cut -d' ' -f1 /proc/uptime)
		echo "BENCH-PROVISIONED timeout at $up"
		echo timeout > LOG/provisioned
		systemctl --no-block start bench-analyze.service
		exit 1
	fi
	sleep POLL
done
up=$(cut -d' ' -f1 /proc/uptime)
echo "BENCH-PROVISIONED $up"
echo "$up" > LOG/provisioned
systemctl --no-block start bench-analyze.service
`

// probeUnit runs it once sshd is up. Without default dependencies, so
// multi-user.target (and cloud-final after it) does not wait for it.
const probeUnit = `[Unit]
Description=bench: time to provisioned (user, key, sshd listening)
DefaultDependencies=no
After=ssh.service
Conflicts=shutdown.target
Before=shutdown.target

[Service]
Type=oneshot
ExecStart=/usr/local/sbin/bench-provisioned
StandardOutput=journal+console

[Install]
WantedBy=multi-user.target
`

// tracedUnits are the units whose start and end bench-analyze keeps:
// each tool's, and sshd's.
var tracedUnits = []string{
	"cloud-init-local.service", "cloud-init.service", "cloud-config.service", "cloud-final.service",
	"earlyinit-boot.service", "earlyinit-final.service", "ssh.service",
}

// analyzeScript is bench-analyze. No set -e: whatever it could not keep,
// it must still power off.
const analyzeScript = `#!/bin/sh
# bench: after the tool's last stage, keep on the disk systemd's
# timestamps of the tools' units, cloud-init's own account of the boot
# (when it ran) and earlyinit's boot record and status, then power off.
d=LOG
mkdir -p "$d"
systemctl show -p Id -p InactiveExitTimestampMonotonic -p ActiveEnterTimestampMonotonic UNITS > "$d/units" 2>&1
if [ ! -e /etc/cloud/cloud-init.disabled ]; then
	cloud-init analyze show > "$d/cloud-init-analyze-show" 2>&1
	cloud-init analyze blame > "$d/cloud-init-analyze-blame" 2>&1
fi
cp /run/earlyinit/boot.json /run/earlyinit/status.json "$d/" 2>/dev/null
sync
echo "BENCH-ANALYZED $(cut -d' ' -f1 /proc/uptime)"
systemctl --no-block poweroff
`

const analyzeUnit = `[Unit]
Description=bench: keep the tools' account of the boot, then power off
DefaultDependencies=no
After=bench-provisioned.service cloud-final.service earlyinit-final.service
Conflicts=shutdown.target
Before=shutdown.target

[Service]
Type=oneshot
ExecStart=/usr/local/sbin/bench-analyze
StandardOutput=journal+console
`

// probeFiles are the files the images get for -until provisioned, and the
// units to enable.
func probeFiles() (map[string]string, []string) {
	if strings.ContainsAny(aliceKey, `'\`) {
		panic("alice's key has a quote")
	}
	probe := strings.NewReplacer("KEY", aliceKey, "AWK", listenAwk, "POLL", probePoll, "MAX", strconv.Itoa(probeMax), "LOG", benchLog).Replace(probeScript)
	analyze := strings.NewReplacer("LOG", benchLog, "UNITS", strings.Join(tracedUnits, " ")).Replace(analyzeScript)
	return map[string]string{
		"usr/local/sbin/bench-provisioned":             probe,
		"usr/local/sbin/bench-analyze":                 analyze,
		"etc/systemd/system/bench-provisioned.service": probeUnit,
		"etc/systemd/system/bench-analyze.service":     analyzeUnit,
	}, []string{"bench-provisioned.service"}
}

// span is a unit's activation, in seconds since the kernel started: from
// leaving inactive to becoming active (a oneshot's ExecStart done, a
// notify service ready).
type span struct{ start, end float64 }

func (s span) dur() float64 { return s.end - s.start }

// parseUnits reads `systemctl show -p Id -p InactiveExitTimestampMonotonic
// -p ActiveEnterTimestampMonotonic UNITS`: blocks of key=value, one per
// unit, blank lines between. Units never started (0 or missing) are left
// out.
func parseUnits(s string) map[string]span {
	out := map[string]span{}
	for _, block := range strings.Split(s, "\n\n") {
		kv := map[string]string{}
		for _, l := range strings.Split(block, "\n") {
			if k, v, ok := strings.Cut(strings.TrimSpace(l), "="); ok {
				kv[k] = v
			}
		}
		a, _ := strconv.ParseFloat(kv["InactiveExitTimestampMonotonic"], 64)
		b, _ := strconv.ParseFloat(kv["ActiveEnterTimestampMonotonic"], 64)
		if kv["Id"] != "" && a > 0 && b >= a {
			out[kv["Id"]] = span{a / 1e6, b / 1e6}
		}
	}
	return out
}

var (
	ciStageRe = regexp.MustCompile(`(?m)^Finished stage: \(([^)]+)\) (\d+\.\d+) seconds$`)
	ciTotalRe = regexp.MustCompile(`(?m)^Total Time: (\d+\.\d+) seconds$`)
	ciBlameRe = regexp.MustCompile(`(?m)^\s+(\d+\.\d+)s \(([^)]+)\)`)
)

// stageTime is one stage of a tool's own account.
type stageTime struct {
	name string
	secs float64
}

// parseCloudInitShow reads `cloud-init analyze show`'s last boot record:
// its stages and its total.
func parseCloudInitShow(s string) ([]stageTime, float64) {
	if i := strings.LastIndex(s, "-- Boot Record "); i >= 0 {
		s = s[i:]
	}
	var stages []stageTime
	for _, m := range ciStageRe.FindAllStringSubmatch(s, -1) {
		f, _ := strconv.ParseFloat(m[2], 64)
		stages = append(stages, stageTime{m[1], f})
	}
	var total float64
	if m := ciTotalRe.FindStringSubmatch(s); m != nil {
		total, _ = strconv.ParseFloat(m[1], 64)
	}
	return stages, total
}

// parseCloudInitBlame reads `cloud-init analyze blame`'s last boot
// record: event name (stage/module) to seconds.
func parseCloudInitBlame(s string) map[string]float64 {
	if i := strings.LastIndex(s, "-- Boot Record "); i >= 0 {
		s = s[i:]
	}
	out := map[string]float64{}
	for _, m := range ciBlameRe.FindAllStringSubmatch(s, -1) {
		f, _ := strconv.ParseFloat(m[1], 64)
		out[m[2]] += f
	}
	return out
}

// provisioned is what a -until provisioned boot left.
type provisioned struct {
	at       float64 // guest uptime when provisioned; 0: never
	timedOut bool
	units    map[string]span
	// The tool's own account: cloud-init's analyze, or earlyinit's
	// boot record and status.
	ciShow, ciBlame string
	stages          []stageTime
	selfTotal       float64
	sshModule       float64 // the ssh module's own time; 0: unknown
	initramfs       float64 // earlyinit's run in the initramfs
	notes           []string
}

var provRe = regexp.MustCompile(`(?m)BENCH-PROVISIONED (\d+\.\d+)\s*$`)

// readProvisioned reads what bench-provisioned and bench-analyze kept on
// img (the console is the fallback for the uptime), and earlyinit's
// record when the variant is earlyinit's.
func readProvisioned(img, console string, earlyinit bool) *provisioned {
	p := &provisioned{}
	cat := func(f string) string { s, _ := vm.Cat(img, benchLog+"/"+f); return s }
	switch at := strings.TrimSpace(cat("provisioned")); {
	case at == "timeout":
		p.timedOut = true
	case at != "":
		p.at, _ = strconv.ParseFloat(at, 64)
	default:
		if m := provRe.FindStringSubmatch(console); m != nil {
			p.at, _ = strconv.ParseFloat(m[1], 64)
		}
	}
	p.units = parseUnits(cat("units"))
	if len(p.units) == 0 {
		p.notes = append(p.notes, "no unit timestamps kept")
	}
	if p.ciShow = cat("cloud-init-analyze-show"); p.ciShow != "" {
		p.ciBlame = cat("cloud-init-analyze-blame")
		p.stages, p.selfTotal = parseCloudInitShow(p.ciShow)
		for name, secs := range parseCloudInitBlame(p.ciBlame) {
			if strings.HasSuffix(name, "/config-ssh") {
				p.sshModule += secs
			}
		}
		return p
	}
	if !earlyinit {
		return p
	}
	rec, bootStage, finalStage, err := earlyinitRecord(img)
	if err != nil {
		p.notes = append(p.notes, "earlyinit's record: "+err.Error())
	}
	if rec != nil {
		p.initramfs = rec.Total.Seconds()
		p.stages = append(p.stages, stageTime{"initramfs", p.initramfs})
		p.selfTotal += p.initramfs
	}
	for _, st := range []struct {
		name string
		s    *late.StageStatus
	}{{"boot", bootStage}, {"final", finalStage}} {
		if st.s == nil || st.s.Start == nil || st.s.Finished == nil {
			continue
		}
		d := *st.s.Finished - *st.s.Start
		p.stages = append(p.stages, stageTime{st.name, d})
		p.selfTotal += d
		for _, m := range st.s.Modules {
			if m.Name == "ssh" {
				p.sshModule += m.Duration
			}
		}
	}
	return p
}

// toolUnits are a tool's units: those before sshd, then the rest.
func toolUnits(cloudInit bool) (before, after []string) {
	if cloudInit {
		return []string{"cloud-init-local.service", "cloud-init.service"}, []string{"cloud-config.service", "cloud-final.service"}
	}
	return []string{"earlyinit-boot.service"}, []string{"earlyinit-final.service"}
}

// sharesOf is shares for v's tool: none for bare.
func (p *provisioned) sharesOf(v *variant) (toProv, all float64) {
	if v.bare {
		return 0, 0
	}
	return p.shares(!v.disabled)
}

// shares are the tool's time before the machine could be provisioned (its
// units sshd waits for, and earlyinit's initramfs run) and in all (its
// other units too), from systemd's timestamps.
func (p *provisioned) shares(cloudInit bool) (toProv, all float64) {
	before, after := toolUnits(cloudInit)
	toProv = p.initramfs
	for _, u := range before {
		toProv += p.units[u].dur()
	}
	all = toProv
	for _, u := range after {
		all += p.units[u].dur()
	}
	return toProv, all
}

type provMeans struct {
	n                                             int
	at, handover, sshd, toProv, all, self, sshMod float64
}

func means(results []*result, v *variant) provMeans {
	var m provMeans
	for _, r := range results {
		if r.v != v || !r.counted() || r.prov == nil || r.prov.at == 0 {
			continue
		}
		toProv, all := r.prov.sharesOf(v)
		m.n++
		m.at += r.prov.at
		m.handover += r.handover
		m.sshd += r.prov.units["ssh.service"].end
		m.toProv += toProv
		m.all += all
		m.self += r.prov.selfTotal
		m.sshMod += r.prov.sshModule
	}
	if m.n > 0 {
		f := float64(m.n)
		m.at, m.handover, m.sshd, m.toProv, m.all, m.self, m.sshMod = m.at/f, m.handover/f, m.sshd/f, m.toProv/f, m.all/f, m.self/f, m.sshMod/f
	}
	return m
}

const provRow = "%-22s %-6s %11s %9s %9s %11s %9s %9s %9s  %s\n"

func reportProvisioned(w io.Writer, results []*result, variants []*variant, setup string) {
	fmt.Fprintf(w, "\nSame Debian bookworm root (cloud-init 22.4.2 installed), same NoCloud drive and user-data (no power_state), %s.\n", setup)
	fmt.Fprintf(w, `provisioned: guest uptime (CLOCK_BOOTTIME, from the kernel's start) when user alice, her key and sshd on :22 all held,
  checked inside the guest every %ss from ssh.service's start; real init: kernel time of the first systemd[1] line;
  sshd: when ssh.service was ready; tool: systemd's activation time of the tool's units, before sshd (cloud-init-local
  + cloud-init; earlyinit's initramfs run + earlyinit-boot) and in all (+ cloud-config + cloud-final; + earlyinit-final);
  own: the tool's own account (cloud-init analyze show's total; earlyinit's boot record + stages); ssh: the ssh module
  (host keys), cloud-init analyze blame's config-ssh, earlyinit's status.
`, probePoll)
	fmt.Fprintf(w, "\n"+provRow, "", "", "provisioned", "real init", "sshd", "tool<sshd", "tool all", "own", "ssh", "")
	byVariant := map[*variant]provMeans{}
	for _, v := range variants {
		m := means(results, v)
		byVariant[v] = m
		if m.n > 0 {
			fmt.Fprintf(w, provRow, v.name, "mean", secs(m.at), secs(m.handover), secs(m.sshd), secs(m.toProv), secs(m.all), secs(m.self), secs(m.sshMod), fmt.Sprintf("mean of %d provisioned run(s) on an idle host", m.n))
		} else {
			fmt.Fprintf(w, provRow, v.name, "mean", "-", "-", "-", "-", "-", "-", "-", "no run provisioned and applied the user-data on an idle host")
		}
		for _, r := range results {
			if r.v != v {
				continue
			}
			if r.prov == nil {
				fmt.Fprintf(w, provRow, "", fmt.Sprintf("run %d", r.n), "-", "-", "-", "-", "-", "-", "-", r.status())
				continue
			}
			p := r.prov
			toProv, all := p.sharesOf(v)
			at := secs(p.at)
			if p.timedOut {
				at = "timeout"
			}
			fmt.Fprintf(w, provRow, "", fmt.Sprintf("run %d", r.n), at, secs(r.handover), secs(p.units["ssh.service"].end), secs(toProv), secs(all), secs(p.selfTotal), secs(p.sshModule), r.status())
		}
	}
	// Ratios: cloud-init's means over each earlyinit variant's.
	var ci *variant
	for _, v := range variants {
		if !v.disabled {
			ci = v
		}
	}
	if ci != nil && byVariant[ci].n > 0 {
		a := byVariant[ci]
		fmt.Fprintln(w)
		for _, v := range variants {
			b := byVariant[v]
			if v == ci || v.bare || b.n == 0 {
				continue
			}
			fmt.Fprintf(w, "ratio %s / %s: provisioned %s, tool before sshd %s, ssh module %s\n", ci.name, v.name, ratio(a.at, b.at), ratio(a.toProv, b.toProv), ratio(a.sshMod, b.sshMod))
		}
	}
	// Each variant's own account, of its first run that has one.
	for _, v := range variants {
		for _, r := range results {
			if r.v != v || r.prov == nil || len(r.prov.stages) == 0 {
				continue
			}
			var parts []string
			for _, s := range r.prov.stages {
				parts = append(parts, fmt.Sprintf("%s %.2fs", s.name, s.secs))
			}
			fmt.Fprintf(w, "\n%s, run %d, own stages: %s\n", v.name, r.n, strings.Join(parts, ", "))
			names := make([]string, 0, len(r.prov.units))
			for u := range r.prov.units {
				names = append(names, u)
			}
			sort.Slice(names, func(i, j int) bool { return r.prov.units[names[i]].start < r.prov.units[names[j]].start })
			fmt.Fprintln(w, "units (seconds since the kernel started):")
			for _, u := range names {
				s := r.prov.units[u]
				fmt.Fprintf(w, "  %-26s %8.2fs -> %8.2fs  (%.2fs)\n", u, s.start, s.end, s.dur())
			}
			if r.prov.ciShow != "" {
				fmt.Fprintf(w, "cloud-init analyze blame (top 12):\n%s", head(r.prov.ciBlame, 14))
			}
			for _, n := range r.prov.notes {
				fmt.Fprintf(w, "note: %s\n", n)
			}
			break
		}
	}
	printAnalyze(w, results, variants)
	reportOverheads(w, results, variants)
}

// reportOverheads prints, when the bare variant ran, each variant's median
// time to provisioned, each tool's overhead over bare's (the difference of
// the medians) and the ratio of cloud-init's to the first earlyinit
// variant's; last, the summary line. The medians are of the runs that
// provisioned and applied the user-data (bare: that found what was baked
// in), a busy host's included: the load averages say how busy.
func reportOverheads(w io.Writer, results []*result, variants []*variant) {
	var bare, ci, ei *variant
	for _, v := range variants {
		switch {
		case v.bare:
			bare = v
		case !v.disabled:
			ci = v
		case ei == nil:
			ei = v
		}
	}
	if bare == nil {
		return
	}
	med := map[*variant]float64{}
	fmt.Fprintf(w, "\nMedians of the time to provisioned (runs that provisioned and applied; those on a busy host included):\n")
	for _, v := range variants {
		var ats []float64
		busy := 0
		for _, r := range results {
			if r.v == v && r.applied() && r.prov != nil && r.prov.at > 0 {
				ats = append(ats, r.prov.at)
				if r.busy {
					busy++
				}
			}
		}
		if len(ats) == 0 {
			fmt.Fprintf(w, "  %-22s -        (no run provisioned)\n", v.name)
			continue
		}
		note := ""
		if len(ats) < 3 {
			note = "; fewer than 3: not a median to go by"
		}
		med[v] = median(ats)
		fmt.Fprintf(w, "  %-22s %7.1f s  (median of %d, %d on a busy host%s)\n", v.name, med[v], len(ats), busy, note)
	}
	over := func(v *variant) (float64, bool) {
		if v == nil {
			return 0, false
		}
		m, ok := med[v]
		b, okb := med[bare]
		return m - b, ok && okb
	}
	for _, v := range variants {
		if o, ok := over(v); ok && !v.bare {
			fmt.Fprintf(w, "  overhead of %-10s %7.1f s over bare\n", v.name, o)
		}
	}
	oe, okE := over(ei)
	oc, okC := over(ci)
	if okE && okC {
		fmt.Fprintf(w, "  ratio of the overheads, %s / %s: %s\n", ci.name, ei.name, ratio(oc, oe))
	}
	num := func(v *variant) string {
		if m, ok := med[v]; ok && v != nil {
			return fmt.Sprintf("%.1f", m)
		}
		return "-"
	}
	diff := func(o float64, ok bool) string {
		if ok {
			return fmt.Sprintf("%.1f", o)
		}
		return "-"
	}
	fmt.Fprintf(w, "provisioned: bare %s s, earlyinit %s s, cloud-init %s s; overhead earlyinit %s s, cloud-init %s s\n",
		num(bare), num(ei), num(ci), diff(oe, okE), diff(oc, okC))
}

// median is the median of xs (not empty).
func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func head(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "")
}

func ratio(a, b float64) string {
	if a == 0 || b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", a/b)
}

// plots saves `earlyinit analyze plot` of each earlyinit variant's first
// provisioned run: earlyinit-plot.svg for the first variant,
// earlyinit-plot-C.svg... for the others.
func plots(log io.Writer, results []*result, variants []*variant, out, bin string) {
	first := true
	for _, v := range variants {
		if !v.earlyinit() {
			continue
		}
		name := "earlyinit-plot.svg"
		if !first {
			name = fmt.Sprintf("earlyinit-plot-%c.svg", v.name[0])
		}
		first = false
		for _, r := range results {
			if r.v != v || r.prov == nil || r.prov.at == 0 {
				continue
			}
			svg, err := earlyinitVerb(r.img, bin, "analyze", "plot")
			if err != nil {
				fmt.Fprintf(log, "%s run %d: %v\n", v.name, r.n, err)
				break
			}
			f := filepath.Join(out, name)
			if err := os.WriteFile(f, []byte(svg), 0o644); err != nil {
				fmt.Fprintf(log, "%s: %v\n", f, err)
			} else {
				fmt.Fprintf(log, "%s run %d: timeline in %s\n", v.name, r.n, f)
			}
			break
		}
	}
}
