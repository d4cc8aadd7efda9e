package dhcp

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"time"

	"github.com/earlyinit/earlyinit/internal/nic"
	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/dhcpv4/nclient4"
	"github.com/insomniacslk/dhcp/iana"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// DefaultTimeout bounds RequestLease when its context has no deadline.
const DefaultTimeout = 30 * time.Second

// Retransmission: the first DISCOVER or REQUEST is resent after
// firstRetransmit, then after twice as long each time up to maxRetransmit.
// RFC 2131 suggests 4 s doubling to 64 s; a boot waits for less.
const (
	firstRetransmit = time.Second
	maxRetransmit   = 4 * time.Second
	// requestTries bounds the REQUESTs sent for one OFFER before the
	// exchange starts over with a DISCOVER.
	requestTries = 3
	// carrierPoll is how often RequestLease looks for carrier.
	carrierPoll = 25 * time.Millisecond
)

// requestedOptions are the options asked for in the parameter request list
// (option 55): what LeaseFromACK reads.
func requestedOptions() []dhcpv4.OptionCode {
	return []dhcpv4.OptionCode{
		dhcpv4.OptionSubnetMask,
		dhcpv4.OptionRouter,
		dhcpv4.OptionDomainNameServer,
		dhcpv4.OptionDomainName,
		dhcpv4.OptionNTPServers,
		dhcpv4.OptionInterfaceMTU,
		dhcpv4.OptionBroadcastAddress,
		dhcpv4.OptionClasslessStaticRoute,
		dhcpv4.GenericOptionCode(optMSClasslessRoute),
	}
}

// RequestLease gets a DHCPv4 lease on iface: it sets the link up if it is
// down, waits for carrier (the link running), and runs Discover-Offer-Request-Ack with
// nclient4, resending each message after 1, 2, 4, 4, ... seconds and
// starting over after a NAK, until ctx is done (or DefaultTimeout passes,
// when ctx has no deadline). It applies nothing: see nic.Up.
//
// The transaction IDs come from math/rand/v2, and the messages are built
// here rather than with dhcpv4.New, which reads crypto randomness and may
// block for minutes early in boot when the kernel's entropy pool is not yet
// initialised.
//
// If RequestLease set the link up, the lease says so in WasDown, so that
// the Ephemeral of nic.Up sets it down again; when it fails, it sets the
// link down itself.
func RequestLease(ctx context.Context, iface string) (l nic.Lease, err error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultTimeout)
		defer cancel()
	}
	link, err := netlink.LinkByName(iface)
	if err != nil {
		return l, fmt.Errorf("dhcp on %s: %w", iface, err)
	}
	hw := link.Attrs().HardwareAddr
	if len(hw) != 6 {
		return l, fmt.Errorf("dhcp on %s: no Ethernet address (%q)", iface, hw)
	}
	wasDown := link.Attrs().Flags&net.FlagUp == 0
	if wasDown {
		if err := netlink.LinkSetUp(link); err != nil {
			return l, fmt.Errorf("dhcp on %s: set link up: %w", iface, err)
		}
		defer func() {
			if err != nil {
				if derr := netlink.LinkSetDown(link); derr != nil {
					err = errors.Join(err, fmt.Errorf("dhcp on %s: set link down again: %w", iface, derr))
				}
			}
		}()
	}
	if err := waitCarrier(ctx, link.Attrs().Index); err != nil {
		return l, fmt.Errorf("dhcp on %s: %w", iface, err)
	}

	c, err := nclient4.New(iface,
		nclient4.WithHWAddr(hw),
		// One try per SendAndRead, bounded by the context we give it,
		// so that the retransmission schedule is ours.
		nclient4.WithRetry(1),
		nclient4.WithTimeout(DefaultTimeout))
	if err != nil {
		return l, fmt.Errorf("dhcp on %s: %w", iface, err)
	}
	defer c.Close()

	ack, err := dora(ctx, c, hw)
	if err != nil {
		return l, fmt.Errorf("dhcp on %s: %w", iface, err)
	}
	l, err = LeaseFromACK(ack, iface)
	if err != nil {
		return nic.Lease{}, err
	}
	l.WasDown = wasDown
	return l, nil
}

// waitCarrier polls the link until it is running: IFF_RUNNING, which the
// kernel sets once it has processed the carrier change and activated the
// link's queue. IFF_LOWER_UP comes a moment earlier, when a packet sent
// can still be dropped without an error.
func waitCarrier(ctx context.Context, index int) error {
	for {
		link, err := netlink.LinkByIndex(index)
		if err != nil {
			return err
		}
		if link.Attrs().RawFlags&unix.IFF_RUNNING != 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("no carrier: %w", ctx.Err())
		case <-time.After(carrierPoll):
		}
	}
}

// dora runs Discover-Offer-Request-Ack until it gets an ACK or ctx is done.
func dora(ctx context.Context, c *nclient4.Client, hw net.HardwareAddr) (*dhcpv4.DHCPv4, error) {
	var naks int
	for {
		xid := newXID()
		discover := newMessage(xid,
			dhcpv4.WithHwAddr(hw),
			dhcpv4.WithMessageType(dhcpv4.MessageTypeDiscover),
			dhcpv4.WithRequestedOptions(requestedOptions()...),
			dhcpv4.WithOption(dhcpv4.OptMaxMessageSize(dhcpv4.MaxMessageSize)))
		offer, err := exchange(ctx, c, discover, nclient4.IsMessageType(dhcpv4.MessageTypeOffer), 0)
		if err != nil {
			return nil, naksToo(err, naks)
		}

		request := newMessage(xid,
			dhcpv4.WithReply(offer),
			dhcpv4.WithMessageType(dhcpv4.MessageTypeRequest),
			dhcpv4.WithOption(dhcpv4.OptRequestedIPAddress(offer.YourIPAddr)),
			dhcpv4.WithOptionCopied(offer, dhcpv4.OptionServerIdentifier),
			dhcpv4.WithRequestedOptions(requestedOptions()...),
			dhcpv4.WithOption(dhcpv4.OptMaxMessageSize(dhcpv4.MaxMessageSize)))
		// Only the server whose offer we took may answer (RFC 2131
		// section 4.3.1 has servers put their identifier in offers).
		reply, err := exchange(ctx, c, request, nclient4.IsAll(
			nclient4.IsCorrectServer(offer.ServerIdentifier()),
			nclient4.IsMessageType(dhcpv4.MessageTypeAck, dhcpv4.MessageTypeNak)), requestTries)
		switch {
		case errors.Is(err, errTries):
			continue // start over, as RFC 2131 says
		case err != nil:
			return nil, naksToo(err, naks)
		case reply.MessageType() == dhcpv4.MessageTypeNak:
			naks++
			select {
			case <-ctx.Done():
				return nil, naksToo(fmt.Errorf("server %v refused %v: %w", offer.ServerIdentifier(), offer.YourIPAddr, ctx.Err()), naks)
			case <-time.After(firstRetransmit):
			}
			continue
		}
		return reply, nil
	}
}

func naksToo(err error, naks int) error {
	switch naks {
	case 0:
		return err
	case 1:
		return fmt.Errorf("%w (after a NAK)", err)
	}
	return fmt.Errorf("%w (after %d NAKs)", err, naks)
}

// errTries says exchange sent its message tries times without an answer.
var errTries = errors.New("no answer")

// exchange sends m and waits for a reply that matches, resending it on the
// retransmission schedule until ctx is done or, when tries > 0, it has been
// sent tries times. A message that cannot be sent (no route yet, a full
// queue) is tried again on the same schedule.
func exchange(ctx context.Context, c *nclient4.Client, m *dhcpv4.DHCPv4, match nclient4.Matcher, tries int) (*dhcpv4.DHCPv4, error) {
	wait := firstRetransmit
	var sendErr error
	for n := 1; ; n++ {
		start := time.Now()
		tctx, cancel := context.WithTimeout(ctx, wait)
		reply, err := c.SendAndRead(tctx, c.RemoteAddr(), m, match)
		cancel()
		if err == nil {
			return reply, nil
		}
		if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) && !errors.Is(err, nclient4.ErrNoResponse) {
			sendErr = err
		}
		if ctx.Err() != nil {
			err := fmt.Errorf("no answer to %d %ss: %w", n, msgName(m.MessageType()), ctx.Err())
			if sendErr != nil {
				err = fmt.Errorf("%w (last send error: %v)", err, sendErr)
			}
			return nil, err
		}
		if tries > 0 && n >= tries {
			return nil, fmt.Errorf("%w to %d %ss", errTries, n, msgName(m.MessageType()))
		}
		// A send error returns at once: wait out the interval.
		select {
		case <-ctx.Done():
		case <-time.After(time.Until(start.Add(wait))):
		}
		wait = min(2*wait, maxRetransmit)
	}
}

func msgName(t dhcpv4.MessageType) string {
	switch t {
	case dhcpv4.MessageTypeDiscover:
		return "DISCOVER"
	case dhcpv4.MessageTypeRequest:
		return "REQUEST"
	}
	return t.String()
}

// newXID is a transaction ID from math/rand/v2, which never blocks: it only
// has to tell our exchanges apart from others on the link (RFC 2131 asks
// for a random number, not a secret one).
func newXID() dhcpv4.TransactionID {
	var xid dhcpv4.TransactionID
	v := rand.Uint32()
	xid[0], xid[1], xid[2], xid[3] = byte(v>>24), byte(v>>16), byte(v>>8), byte(v)
	return xid
}

// newMessage builds a BOOTREQUEST as dhcpv4.New does, with the given
// transaction ID instead of one read from crypto/rand.
func newMessage(xid dhcpv4.TransactionID, mods ...dhcpv4.Modifier) *dhcpv4.DHCPv4 {
	m := &dhcpv4.DHCPv4{
		OpCode:        dhcpv4.OpcodeBootRequest,
		HWType:        iana.HWTypeEthernet,
		ClientHWAddr:  make(net.HardwareAddr, 6),
		TransactionID: xid,
		ClientIPAddr:  net.IPv4zero,
		YourIPAddr:    net.IPv4zero,
		ServerIPAddr:  net.IPv4zero,
		GatewayIPAddr: net.IPv4zero,
		Options:       make(dhcpv4.Options),
	}
	for _, mod := range mods {
		mod(m)
	}
	return m
}
