//go:build !initrd

package main

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"math"
	"math/big"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/spf13/pflag"
)

func init() {
	verbs["make-mime"] = &verbMakeMIME
}

// verbMakeMIME is the make-mime verb.
var verbMakeMIME = verb{help: "write a MIME multipart user-data of the files attached, on stdout, as cloud-init devel make-mime (`make-mime -a config.yaml:cloud-config -a script.sh:x-shellscript > user-data`)",
	flags: func() *pflag.FlagSet { return new(makeMIMEOpts).flags() }, run: makeMIMEVerb}

// makeMIMEOpts are cloud-init devel make-mime's flags.
type makeMIMEOpts struct {
	attach           []string
	listTypes, force bool
}

func (o *makeMIMEOpts) flags() *pflag.FlagSet {
	fs := newFlags("make-mime")
	fs.StringArrayVarP(&o.attach, "attach", "a", nil, "attach `FILE:TYPE`, the file as the content type text/TYPE (cloud-config, x-shellscript...); repeat for each part")
	fs.BoolVarP(&o.listTypes, "list-types", "l", false, "list the content types cloud-init handles")
	fs.BoolVarP(&o.force, "force", "f", false, "write the message even when a content type is not one cloud-init handles")
	fileFlag(fs, "attach")
	return fs
}

// mimeContentTypes are cloud-init's handlers' INCLUSION_TYPES_MAP
// values, sorted: what make-mime --list-types prints without "text/".
var mimeContentTypes = [...]string{
	"text/cloud-boothook", "text/cloud-config", "text/cloud-config-archive", "text/cloud-config-jsonp",
	"text/jinja2", "text/part-handler", "text/x-include-once-url", "text/x-include-url",
	"text/x-shellscript", "text/x-shellscript-per-boot", "text/x-shellscript-per-instance", "text/x-shellscript-per-once",
}

// mimePart is one attachment: its name as given, its content type's
// subtype and its text.
type mimePart struct {
	name, subtype string
	text          []byte
}

// maxAttachment bounds a file make-mime attaches: user-data's own bound.
const maxAttachment = 16 << 20

func makeMIMEVerb(args []string) int {
	var o makeMIMEOpts
	fs := o.flags()
	if ok, code := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return usageError("make-mime", "takes no operands, got %q", fs.Args())
	}
	if o.listTypes {
		for _, t := range mimeContentTypes {
			fmt.Println(strings.TrimPrefix(t, "text/"))
		}
		return 0
	}
	var parts []mimePart
	for _, a := range o.attach {
		name, typ, ok := strings.Cut(a, ":")
		if !ok {
			return usageError("make-mime", "--attach %q: want FILE:TYPE", a)
		}
		if strings.ContainsAny(name, "\"\\\r\n") || strings.ContainsAny(typ, "\"\\\r\n;") {
			return usageError("make-mime", "--attach %q: a quote, backslash, semicolon or line break in the name or type", a)
		}
		b, err := readFileCapped(name, maxAttachment)
		if err != nil {
			fmt.Fprintf(os.Stderr, "make-mime: %v\n", err)
			return 1
		}
		if !utf8.Valid(b) {
			fmt.Fprintf(os.Stderr, "make-mime: %s: not UTF-8 text (make-mime attaches text, as cloud-init's)\n", name)
			return 1
		}
		// Read as Python reads a text file: universal newlines.
		b = bytes.ReplaceAll(bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n")), []byte("\r"), []byte("\n"))
		parts = append(parts, mimePart{name: name, subtype: strings.TrimSpace(typ), text: b})
	}
	var problems []string
	for i, p := range parts {
		ct := mimeContentType("text/" + p.subtype)
		known := false
		for _, t := range mimeContentTypes {
			known = known || t == ct
		}
		if !known {
			problems = append(problems, fmt.Sprintf("content type '%s' for attachment %d may be incorrect!", ct, i+1))
		}
	}
	if len(problems) > 0 {
		level := "ERROR"
		if o.force {
			level = "WARNING"
		}
		for _, p := range problems {
			fmt.Fprintf(os.Stderr, "%s: %s\n", level, p)
		}
		fmt.Fprintln(os.Stderr, "Invalid content-types, override with --force")
		if !o.force {
			return 1
		}
	}
	if err := writeMIME(os.Stdout, parts); err != nil {
		fmt.Fprintf(os.Stderr, "make-mime: %v\n", err)
		return 1
	}
	return 0
}

// mimeContentType is Python's email Message.get_content_type of a
// Content-Type value: lower case, text/plain unless type/subtype.
func mimeContentType(v string) string {
	ct := strings.ToLower(strings.TrimSpace(strings.SplitN(v, ";", 2)[0]))
	if strings.Count(ct, "/") != 1 {
		return "text/plain"
	}
	return ct
}

// mimeBoundary is Python email's _make_boundary: 15 "=", a random number
// below 2**63-1 on 19 digits, "==".
func mimeBoundary() (string, error) {
	n, err := rand.Int(rand.Reader, big.NewInt(math.MaxInt64))
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("===============%019d==", n.Int64()), nil
}

// writeMIME writes parts as cloud-init's make-mime prints its
// MIMEMultipart of MIMEText(text, subtype, "utf-8") parts, each with
// Content-Disposition: attachment; filename="NAME": Python's
// email.generator output (base64 bodies in lines of 76) and print's
// newline.
func writeMIME(w io.Writer, parts []mimePart) error {
	boundary, err := mimeBoundary()
	if err != nil {
		return err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "Content-Type: multipart/mixed; boundary=\"%s\"\nMIME-Version: 1.0\n\n--%s\n", boundary, boundary)
	for i, p := range parts {
		if i > 0 {
			fmt.Fprintf(&b, "\n--%s\n", boundary)
		}
		fmt.Fprintf(&b, "Content-Type: text/%s; charset=\"utf-8\"\nMIME-Version: 1.0\nContent-Transfer-Encoding: base64\nContent-Disposition: attachment; filename=\"%s\"\n\n",
			p.subtype, p.name)
		enc := base64.StdEncoding.EncodeToString(p.text)
		for len(enc) > 76 {
			b.WriteString(enc[:76] + "\n")
			enc = enc[76:]
		}
		if enc != "" {
			b.WriteString(enc + "\n")
		}
	}
	fmt.Fprintf(&b, "\n--%s--\n\n", boundary)
	_, err = w.Write(b.Bytes())
	return err
}
