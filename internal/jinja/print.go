package jinja

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/earlyinit/earlyinit/internal/pystr"
	"github.com/earlyinit/earlyinit/internal/pyyaml"
)

// printer writes Python's str() and repr() of values, charging what it
// writes to the renderer's budget.
type printer struct {
	b strings.Builder
	r *renderer
	// line is where the value is printed, for errors.
	line int
}

func (p *printer) write(s string) error {
	p.b.WriteString(s)
	if p.r != nil && p.b.Len() > p.r.lim.Output {
		return limitf(p.line, "a value longer than %d bytes", p.r.lim.Output)
	}
	return nil
}

// str writes Python's str(v).
func (p *printer) str(v any) error {
	switch x := v.(type) {
	case string:
		return p.write(x)
	case undefined:
		if x.plain {
			return nil
		}
		if p.r != nil {
			p.r.missing = append(p.r.missing, x.name)
		}
		return p.write(missingPrefix + x.name)
	}
	return p.repr(v)
}

// repr writes Python's repr(v).
func (p *printer) repr(v any) error {
	if p.r != nil {
		if err := p.r.step(p.line, 1); err != nil {
			return err
		}
	}
	switch x := v.(type) {
	case nil:
		return p.write("None")
	case bool:
		if x {
			return p.write("True")
		}
		return p.write("False")
	case int64:
		return p.write(strconv.FormatInt(x, 10))
	case float64:
		return p.write(pyyaml.FloatRepr(x))
	case string:
		return p.write(pystr.Repr(x, false))
	case []any:
		return p.seq("[", x, "]", false)
	case tuple:
		return p.seq("(", x, ")", len(x) == 1)
	case *Dict:
		if err := p.write("{"); err != nil {
			return err
		}
		for i := range x.keys {
			if i > 0 {
				if err := p.write(", "); err != nil {
					return err
				}
			}
			if err := p.repr(x.keys[i]); err != nil {
				return err
			}
			if err := p.write(": "); err != nil {
				return err
			}
			if err := p.repr(x.vals[i]); err != nil {
				return err
			}
		}
		return p.write("}")
	case view:
		if err := p.write(typeName(x) + "("); err != nil {
			return err
		}
		if err := p.seq("[", x.items(), "]", false); err != nil {
			return err
		}
		return p.write(")")
	case rangeV:
		if x.step == 1 {
			return p.write(fmt.Sprintf("range(%d, %d)", x.start, x.stop))
		}
		return p.write(fmt.Sprintf("range(%d, %d, %d)", x.start, x.stop, x.step))
	case undefined:
		return p.write("Undefined")
	}
	// An iterator's, a method's or the loop's repr holds an address
	// in Python: nothing to print the same.
	return errorf(p.line, "cannot print a %s (Python prints its address): convert it first, as with |list", typeName(v))
}

func (p *printer) seq(open string, items []any, close string, comma bool) error {
	if err := p.write(open); err != nil {
		return err
	}
	for i, e := range items {
		if i > 0 {
			if err := p.write(", "); err != nil {
				return err
			}
		}
		if err := p.repr(e); err != nil {
			return err
		}
	}
	if comma {
		if err := p.write(","); err != nil {
			return err
		}
	}
	return p.write(close)
}
