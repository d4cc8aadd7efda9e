package blockdev

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// stuckDevice blocks every ReadAt until release is closed, as a device
// whose I/O never completes.
type stuckDevice struct {
	release <-chan struct{}
	reads   *atomic.Int32
}

func (d stuckDevice) ReadAt(p []byte, off int64) (int, error) {
	d.reads.Add(1)
	<-d.release
	return 0, errors.New("released")
}

func (d stuckDevice) Close() error { return nil }

// withStuck makes opening the device node named stuck return a stuckDevice,
// and undoes it (releasing the blocked reads) at the end of the test.
func withStuck(t *testing.T, stuckName string, timeout time.Duration) *atomic.Int32 {
	t.Helper()
	release := make(chan struct{})
	reads := new(atomic.Int32)
	oldOpen, oldTimeout := openDevice, probeTimeout
	openDevice = func(path string) (device, error) {
		if filepath.Base(path) == stuckName {
			return stuckDevice{release: release, reads: reads}, nil
		}
		return oldOpen(path)
	}
	probeTimeout = timeout
	t.Cleanup(func() {
		close(release)
		// Let the abandoned reads return and unmark themselves.
		defer func() { openDevice, probeTimeout = oldOpen, oldTimeout }()
		deadline := time.Now().Add(time.Second)
		for time.Now().Before(deadline) {
			n := 0
			stuck.Range(func(any, any) bool { n++; return true })
			if n == 0 {
				return
			}
			time.Sleep(time.Millisecond)
		}
		t.Errorf("stuck reads still marked after release")
	})
	return reads
}

// TestListStuckDevice: a device whose reads never return is reported as
// timed out after the bound, the others are probed normally, and a later
// listing neither waits again nor starts another read of it.
func TestListStuckDevice(t *testing.T) {
	f := newFakeSys(t)
	imgs := t.TempDir()
	root := mkext4(t, imgs, "root.img", "root")
	junk := sparse(t, imgs, "junk.img", 1<<20)
	f.add("vda", "", 0, 1<<20, false, junk) // stuck
	f.add("vdb", "", 0, 4<<20, false, root)
	reads := withStuck(t, "vda", 300*time.Millisecond)

	t0 := time.Now()
	devs, err := List(f.sys, f.dev)
	took := time.Since(t0)
	if err != nil {
		t.Fatal(err)
	}
	if took < 250*time.Millisecond || took > 2*time.Second {
		t.Errorf("first List took %s, want about the 300ms bound", took)
	}
	if len(devs) != 2 || !errors.Is(devs[0].ProbeErr, errProbeTimeout) || devs[1].FS.Label != "root" {
		t.Fatalf("List = %v", devs)
	}
	if s := devs[0].String(); !strings.HasPrefix(s, "vda unknown (probe timed out after ") {
		t.Errorf("vda.String() = %s", s)
	}

	t0 = time.Now()
	devs, err = List(f.sys, f.dev)
	if took := time.Since(t0); took > 200*time.Millisecond {
		t.Errorf("second List took %s, want no wait on the stuck device", took)
	}
	if err != nil || !errors.Is(devs[0].ProbeErr, errProbeTimeout) || devs[1].FS.Label != "root" {
		t.Fatalf("second List = %v, %v", devs, err)
	}
	if n := reads.Load(); n != 1 {
		t.Errorf("%d reads started on the stuck device, want 1", n)
	}
}

// TestWaitStuckDevice: Wait for a root that is not there, with a stuck
// device listed, ends at its context's deadline (or, for a deadline
// shorter than ProbeGrace, after the last listing's ProbeGrace), not the
// probe bound.
func TestWaitStuckDevice(t *testing.T) {
	f := newFakeSys(t)
	junk := sparse(t, t.TempDir(), "junk.img", 1<<20)
	f.add("vda", "", 0, 1<<20, false, junk)
	withStuck(t, "vda", time.Hour)
	spec, err := ParseSpec("LABEL=root")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	_, seen, err := Wait(ctx, f.sys, f.dev, 10*time.Millisecond, spec.Match, nil)
	if took := time.Since(t0); took > ProbeGrace+time.Second {
		t.Errorf("Wait took %s with a 200ms context and a %s probe grace", took, ProbeGrace)
	}
	if !errors.Is(err, context.DeadlineExceeded) || len(seen) != 1 || !errors.Is(seen[0].ProbeErr, errProbeTimeout) {
		t.Fatalf("Wait = %v, %v; want the deadline and vda timed out", seen, err)
	}
}

// TestProbeTruncatedISO: an ISO image cut anywhere (a truncated download
// attached as a drive) probes to a result or a clear error, never a panic,
// whether the device is as short as the cut or claims the full size and
// fails its reads past the cut.
func TestProbeTruncatedISO(t *testing.T) {
	img := mkiso(t, filepath.Join(t.TempDir(), "t.iso"), "-V", "config-2", "-J", "-r")
	full, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	for _, cut := range []int{0, 1, 511, 512, 16 * isoSector, 16*isoSector + 1, 16*isoSector + 40, 16*isoSector + 100,
		17 * isoSector, 17*isoSector + 1, 18 * isoSector, 18*isoSector + 10, 19 * isoSector, len(full) / 2, len(full) - 1} {
		if cut > len(full) {
			continue
		}
		b := full[:cut]
		// Short device: size is the cut.
		fs, err := Probe(bytes.NewReader(b), int64(len(b)))
		switch {
		case cut >= 19*isoSector && (err != nil || fs.Label != "config-2"):
			// PVD, Joliet SVD and terminator are whole: the label is found.
			t.Errorf("cut at %d: %+v, %v; want config-2", cut, fs, err)
		case cut < 19*isoSector && err == nil && fs.Type == "iso9660":
			t.Errorf("cut at %d: %+v, want an error", cut, fs)
		}
		// Lying device: the full size, reads fail past the cut.
		fs, err = Probe(bytes.NewReader(b), int64(len(full)))
		if cut < 17*isoSector && err == nil {
			t.Errorf("cut at %d, full size: %+v, want an error", cut, fs)
		}
		if err != nil && !strings.Contains(err.Error(), "iso9660") && !errors.Is(err, ErrUnknown) {
			t.Errorf("cut at %d, full size: %v does not say what failed", cut, err)
		}
	}
}

// panicDevice panics on read, as a prober bug on hostile bytes would.
type panicDevice struct{}

func (panicDevice) ReadAt(p []byte, off int64) (int, error) { panic("prober bug") }
func (panicDevice) Close() error                            { return nil }

// TestListPanickingProbe: a probe runs in its own goroutine, where no
// caller's recover reaches; a panic there must be the device's probe error,
// not the death of PID 1.
func TestListPanickingProbe(t *testing.T) {
	f := newFakeSys(t)
	imgs := t.TempDir()
	f.add("vda", "", 0, 1<<20, false, sparse(t, imgs, "junk.img", 1<<20))
	f.add("vdb", "", 0, 4<<20, false, mkext4(t, imgs, "root.img", "root"))
	oldOpen := openDevice
	openDevice = func(path string) (device, error) {
		if filepath.Base(path) == "vda" {
			return panicDevice{}, nil
		}
		return oldOpen(path)
	}
	t.Cleanup(func() { openDevice = oldOpen })
	devs, err := List(f.sys, f.dev)
	if err != nil {
		t.Fatal(err)
	}
	if len(devs) != 2 || devs[0].ProbeErr == nil || !strings.Contains(devs[0].ProbeErr.Error(), "probe panicked: prober bug") || devs[1].FS.Label != "root" {
		t.Fatalf("List = %v (vda: %v)", devs, devs[0].ProbeErr)
	}
}
