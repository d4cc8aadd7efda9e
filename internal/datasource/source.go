package datasource

import (
	"context"
	"errors"
	"io/fs"
	"time"

	"github.com/earlyinit/earlyinit/internal/dmi"
	"github.com/earlyinit/earlyinit/internal/httpget"
	"github.com/earlyinit/earlyinit/internal/instance"
)

// Source describes one datasource, once: its name, every way it is
// recognised and how it is read. Each reader package declares its Source
// (configdrive.Source, nocloud.Source, ...); internal/discover lists them and is
// the only code that walks them. A source fills in the ways it has and
// leaves the others nil.
type Source struct {
	// Name is the source's name in earlyinit.ds=, in the logs and in
	// instance-data's "datasource" (lower case).
	Name string
	// Class is cloud-init's class name for the source without its
	// "DataSource" prefix ("ConfigDrive"): the datasource files name it.
	Class string

	// Labels are the filesystem labels of the source's config drive
	// (ISO9660 or vfat), compared exactly: vfat labels are often
	// upper-cased, so both spellings are listed.
	Labels []string
	// SeedDirs are directories in the real root read, as a drive is,
	// before any drive (cloud-init's /var/lib/cloud/seed/...).
	SeedDirs []string
	// ReadFS reads a drive or a seed directory. It is given a DriveFS:
	// no links, no special files, every read capped.
	ReadFS func(fs.FS) (*instance.Data, error)

	// Metadata reads the source's metadata service. All metadata sources
	// share one temporary network, brought up once, and are given it as
	// a Service.
	Metadata func(ctx context.Context, svc Service) (*instance.Data, error)
	// Local says Metadata reads no network (VMware's guestinfo, through
	// the hypervisor): it is asked in its place in the order, without the
	// temporary network, given only Service.Root and Logf. An error that
	// is ErrAbsent means nothing is there for it (the next source, and
	// None, may follow); any other rejects it.
	Local bool
	// Ready, if set, tells the platform the instance was read (Azure's
	// ready report, without which the platform marks provisioning
	// failed). Discovery calls it once Metadata has returned an instance,
	// while the temporary network is still up, within earlyinit.timeout;
	// a failure is logged, the instance kept.
	Ready func(ctx context.Context, svc Service, d *instance.Data) error
	// ProvisioningDrive, if set, recognises by filesystem type and label
	// the drive that comes with the source's metadata service (Azure's
	// provisioning media: udf or iso9660, no fixed label). When the
	// metadata service is asked, discovery first reads the first such
	// drive holding ProvisioningFile and hands it over in Service.Drive.
	ProvisioningDrive func(fstype, label string) bool
	// ProvisioningFile is the file that makes a drive the provisioning
	// drive ("ovf-env.xml").
	ProvisioningFile string
	// MetadataBase is the source's own service address when it is not
	// the link-local one ("http://100.100.100.200" for Alibaba Cloud);
	// Service.Base is then this (earlyinit.metadata_url still wins).
	// "" means the shared default. A service found at the DHCP server
	// (CloudStack) reads Service.DHCPServer instead.
	MetadataBase string

	// Platform recognises the source's platform from the machine's DMI
	// strings (cloud-init's ds-identify rules). Discovery tries a
	// metadata service only when its platform is recognised or the user
	// asked for the source (earlyinit.ds=, datasource_list); drives and
	// seeds are tried always. nil: never recognised by DMI.
	Platform func(dmi.Info) bool

	// Cmdline reads the source's own words on the kernel command line
	// (every word that is not earlyinit's, as key -> value). ok is false
	// when the command line does not name this source; then discovery
	// does not consider it asked for.
	Cmdline func(params map[string]string) (h Hint, ok bool, err error)

	// SeedFrom reads a seedfrom setting of the image's configuration
	// (datasource.NoCloud.seedfrom) into a Hint, as the source's
	// command-line seed is read; origin names the setting for the logs.
	SeedFrom func(v, origin string) (Hint, error)
	// SeedURL reads the source's files from a URL a seed names
	// (ds=nocloud;s=http://...), over the temporary network the metadata
	// sources share.
	SeedURL func(ctx context.Context, svc Service, url string) (*instance.Data, error)
}

// Service is a metadata service as discovery hands it to a source.
type Service struct {
	// Base is the service's URL without a trailing slash:
	// http://169.254.169.254, the link-local IPv6 address, or
	// earlyinit.metadata_url.
	Base string
	// HTTP makes the requests; nil means the source's own httpget.Getter
	// (its timeouts, retries and caps).
	HTTP httpget.Fetcher
	// Logf is told of retries and of what the source chose.
	Logf func(string, ...any)
	// Timeout bounds each try of each request when HTTP is nil (the
	// image's datasource.<Class>.timeout); 0 means the source's default.
	Timeout time.Duration
	// DHCPServer is the temporary lease's server address ("10.1.1.1"),
	// "" when there is no lease: CloudStack and Exoscale serve metadata
	// (and CloudStack its password server) there.
	DHCPServer string
	// Drive is the source's provisioning drive (Source.ProvisioningDrive),
	// mounted read-only and read through a DriveFS; nil when there is
	// none.
	Drive fs.FS
	// Root is where the real root is mounted: its CA bundle verifies
	// https seeds (httpget.Getter.CARoot).
	Root string
	// DefaultUser is the name of the default user the image's
	// configuration creates, "" for none: GCE takes that user's ssh-keys
	// lines too (cloud-init's default_user).
	DefaultUser string
	// SecondaryNICs is the image's datasource.Oracle.
	// configure_secondary_nics: Oracle configures the secondary VNICs too.
	SecondaryNICs bool
	// Base4 is http://169.254.169.254 when there was no lease and an IPv4
	// link-local address (169.254.A.B/16) was put on the NIC for it, ""
	// otherwise: DigitalOcean serves its metadata there without DHCP,
	// while Base stays the IPv6 link-local path other clouds serve.
	Base4 string
}

// Hint is what a source's kernel command-line words, or the image's
// seedfrom setting, ask for.
type Hint struct {
	// Seed is a directory in the real root to read before anything else,
	// "" for none; Origin says where it came from, for the logs
	// ("ds=nocloud;s=/seed").
	Seed, Origin string
	// SeedURL is an http:// URL to read the source's files from (with
	// Source.SeedURL) before anything else, "" for none; Seed and SeedURL
	// are never both set.
	SeedURL string
	// Apply, if set, overrides what any read of this source found
	// (ds=nocloud;i=...;h=... sets the instance id and hostname).
	Apply func(*instance.Data)
	// Alone, if set, is the instance the words describe by themselves,
	// used when they name no seed and the source's seed directories and
	// drives hold nothing: cloud-init's NoCloud claims ds=nocloud on the
	// command line (or in the DMI serial) with no seed at all, its
	// instance-id i= or "nocloud". Apply still runs on it.
	Alone func() *instance.Data
	// From is where discovery found the words ("cmdline", "dmi",
	// "dmi,cmdline"), cloud-init's name for them in the seed it reports.
	From string
}

// Drive tells whether a filesystem of type fstype labelled label is one of
// s's config drives.
func (s Source) Drive(fstype, label string) bool {
	if fstype != "iso9660" && fstype != "vfat" {
		return false
	}
	for _, l := range s.Labels {
		if l == label {
			return true
		}
	}
	return false
}

// ErrAbsent is what a Local source's error is (errors.Is) when nothing is
// there for it, as cloud-init's get_data returning False: VMware's
// guestinfo with no metadata, a VMware VM with neither a customization
// nor an OVF environment.
var ErrAbsent = errors.New("nothing there")

// Absent is an error with msg as its text that is ErrAbsent.
func Absent(msg string) error { return absentError(msg) }

type absentError string

func (e absentError) Error() string        { return string(e) }
func (e absentError) Is(target error) bool { return target == ErrAbsent }
