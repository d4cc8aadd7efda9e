package scripts

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/httpget"
	"github.com/earlyinit/earlyinit/internal/modules/core"
)

// Bounds of phone_home: tries are capped, each try has a timeout, tries
// are 3 seconds apart (cloud-init's sec_between).
const (
	phoneHomeMaxTries = 10
	phoneHomeTimeout  = 10 * time.Second
	phoneHomeWait     = 3 * time.Second
)

// PhoneHome is cc_phone_home: POST the chosen keys (post: "all" or a list;
// default all) as x-www-form-urlencoded to url, $INSTANCE_ID in the URL
// replaced, up to tries times (default 10, at most 10). An unknown key is
// posted as "N/A", as is a host key that is missing. As in cloud-init, a
// failure is logged, not a module error.
func PhoneHome(ctx context.Context, e *core.Env) error {
	ph, ok, err := ccfg.Decode[ccfg.PhoneHome](e.Cfg, "phone_home")
	if err != nil {
		return err
	}
	if !ok {
		// Missing: the module's Keys keep it from running.
		return fmt.Errorf("phone_home: want a map, got null")
	}
	u := ph.URL
	if u == "" {
		e.Logf("phone_home: no url: skipped")
		return nil
	}
	tries := 10
	if t := ph.Tries; t.Err != nil {
		e.Logf("%v: using 10", t.Err)
	} else if t.Given {
		tries = t.N
	}
	tries = max(1, min(tries, phoneHomeMaxTries))
	if ph.Post.Err != nil {
		return ph.Post.Err
	}
	post := ph.Post.Names
	if post == nil {
		post = ccfg.PhoneHomeAll
	}
	all := map[string]string{"instance_id": e.InstanceID}
	// The datasource's names, as cloud-init's cloud.get_hostname(), not
	// the hostname and fqdn keys.
	if short, fqdn, err := e.DatasourceHostnames(); err == nil {
		all["hostname"], all["fqdn"] = short, fqdn
	} else {
		e.Logf("phone_home: %v", err)
	}
	for _, t := range []string{"dsa", "rsa", "ecdsa", "ed25519"} {
		if b, err := e.Root.ReadFile(core.HostKeyFile(t) + ".pub"); err == nil {
			all["pub_key_"+t] = string(b)
		}
	}
	form := url.Values{}
	for _, k := range post {
		v, ok := all[k]
		if !ok {
			e.Logf("phone_home: %s is not available: posting N/A", k)
			v = "N/A"
		}
		form.Set(k, v)
	}
	u = strings.ReplaceAll(strings.ReplaceAll(u, "${INSTANCE_ID}", e.InstanceID), "$INSTANCE_ID", e.InstanceID)
	client := e.HTTP
	if client == nil {
		// The late stages' Getter: the environment's proxy, redirects
		// followed (a 301/302/303 turns the POST into a GET, as with
		// cloud-init's requests), the root's CA bundle.
		client = httpget.System(e.Root.Dir())
		client.RequestTimeout, client.Retries = phoneHomeTimeout, -1
	}
	body := form.Encode()
	var last error
	for i := 0; i < tries; i++ {
		if i > 0 {
			sleep(ctx, e, phoneHomeWait)
		}
		if ctx.Err() != nil {
			break
		}
		last = postForm(ctx, client, u, body)
		if last == nil {
			e.Logf("phone_home: posted %d key(s) to %s", len(post), u)
			return nil
		}
	}
	e.Logf("phone_home: failed to post to %s in %d tries: %v", u, tries, last)
	return nil
}

// postForm posts body once; the caller does the tries, as cloud-init's.
func postForm(ctx context.Context, g *httpget.Getter, u, body string) error {
	ctx, cancel := context.WithTimeout(ctx, phoneHomeTimeout)
	defer cancel()
	_, err := g.Post(ctx, u, "application/x-www-form-urlencoded", []byte(body), 1<<20)
	return err
}

func sleep(ctx context.Context, e *core.Env, d time.Duration) {
	if e.Sleep != nil {
		e.Sleep(ctx, d)
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
