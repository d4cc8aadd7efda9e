package discover

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/logs"
)

// The metadata services: the temporary network they are reached through,
// and the asking.

// raise brings up the NICs a metadata service may be reached through,
// once (System.RaiseLinks); down puts them back.
func (f *finder) raise() {
	if f.lower == nil {
		f.lower = f.sys.RaiseLinks()
	}
}

// network brings the temporary network up the first time a source needs
// it, bounded by earlyinit.timeout from then on; it stays up for the other
// sources until the search ends (down). A failure is remembered: the
// network is tried once.
func (f *finder) network() (context.Context, datasource.Service, error) {
	if !f.netTried {
		f.netTried = true
		f.raise()
		f.netCtx, f.netCancel = context.WithTimeout(context.Background(), f.timeout)
		f.svc, f.netDone, f.netErr = f.sys.Network(f.netCtx)
		f.svc.Logf = f.log.Debugf
	}
	return f.netCtx, f.svc, f.netErr
}

// down takes the temporary network down and the raised NICs back down.
func (f *finder) down() {
	if f.netDone != nil {
		f.netDone()
	}
	if f.netCancel != nil {
		f.netCancel()
	}
	if f.lower != nil {
		f.lower()
	}
}

// metadata asks each metadata source in turn over the temporary network
// (brought up once, the whole attempt bounded by earlyinit.timeout).
func (f *finder) metadata(srcs []datasource.Source) (*instance.Data, error) {
	ctx, svc, err := f.network()
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, src := range srcs {
		d, err := f.askMetadata(ctx, svc, src)
		if err != nil {
			f.log.Errorf("datasource %s rejected: %v", src.Name, err)
			f.rejected++
			errs = append(errs, fmt.Errorf("%s: %w", src.Name, err))
			continue
		}
		if src.Ready != nil {
			if err := logs.Guard(f.log, "datasource "+src.Name+" ready report", func() error { return src.Ready(ctx, svc, d) }); err != nil {
				f.log.Errorf("datasource %s: ready report to the platform failed: %v", src.Name, err)
			} else {
				f.log.Printf("datasource %s: reported ready to the platform", src.Name)
			}
		}
		return f.finish(d, src), nil
	}
	return nil, errors.Join(errs...)
}

// rootDirer is a System that knows where the real root is mounted, for
// the sources that run the image's own tools (Service.Root).
type rootDirer interface {
	RootDir() string
}

// local asks a Local source, without the temporary network, within
// earlyinit.timeout.
func (f *finder) local(src datasource.Source) *instance.Data {
	ctx, cancel := context.WithTimeout(context.Background(), f.timeout)
	defer cancel()
	svc := datasource.Service{Logf: f.log.Debugf}
	if r, ok := f.sys.(rootDirer); ok {
		svc.Root = r.RootDir()
	}
	d, err := f.askMetadata(ctx, svc, src)
	if errors.Is(err, datasource.ErrAbsent) {
		// Nothing there, as cloud-init's get_data returning False: not
		// a source that was there and was bad, so None may follow.
		f.log.Printf("datasource %s: %v", src.Name, err)
		return nil
	}
	if err != nil {
		f.log.Errorf("datasource %s rejected: %v", src.Name, err)
		f.rejected++
		return nil
	}
	return f.finish(d, src)
}

// askMetadata asks src's metadata service at each of its base URLs in
// turn, the image's metadata_urls or the one the System found, within the
// image's max_wait and with its per-request timeout.
func (f *finder) askMetadata(ctx context.Context, svc datasource.Service, src datasource.Source) (*instance.Data, error) {
	set := f.img.Settings[src.Class]
	bases := []string{svc.Base}
	if src.MetadataBase != "" && f.metadataURL == "" {
		// The source's own address (Alibaba's 100.100.100.200), unless
		// earlyinit.metadata_url names one.
		bases = []string{src.MetadataBase}
	}
	if len(set.MetadataURLs) > 0 {
		if f.metadataURL != "" {
			f.log.Printf("datasource.%s.metadata_urls of the image ignored: earlyinit.metadata_url on the kernel command line wins", src.Class)
		} else {
			bases = set.MetadataURLs
		}
	}
	if set.MaxWait > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, set.MaxWait)
		defer cancel()
	}
	svc.Timeout = set.Timeout
	svc.SecondaryNICs = set.SecondaryNICs
	svc.DefaultUser = f.img.DefaultUser
	if src.ProvisioningDrive != nil {
		svc.Drive = f.provisioningDrive(src)
	}
	var errs []error
	for _, base := range bases {
		s := svc
		s.Base = strings.TrimRight(base, "/")
		var d *instance.Data
		err := logs.Guard(f.log, "datasource "+src.Name, func() error {
			var err error
			d, err = src.Metadata(ctx, s)
			return err
		})
		if err == nil {
			return d, nil
		}
		if len(bases) > 1 {
			err = fmt.Errorf("%s: %w", redactURL(s.Base), err)
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			if set.MaxWait > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded) {
				errs = append(errs, fmt.Errorf("gave up after datasource.%s.max_wait (%s)", src.Class, set.MaxWait))
			}
			break
		}
	}
	return nil, errors.Join(errs...)
}
