package parse

import (
	"slices"
	"strings"

	"github.com/earlyinit/earlyinit/internal/jinja/lex"
)

// checkUnknown is Jinja2's compile-time check of filter and test names: a
// name it does not have is an error, except in a "soft" frame (an if's
// test and bodies, an if-expression), where it is one only when run.
func checkUnknown(body []Node, soft bool) error {
	for _, n := range body {
		var err error
		switch x := n.(type) {
		case Print:
			err = checkExpr(x.E, soft)
		case If:
			for i, t := range x.Tests {
				if err = checkExpr(t, true); err == nil {
					err = checkUnknown(x.Bodies[i], true)
				}
				if err != nil {
					return err
				}
			}
			err = checkUnknown(x.Els, true)
		case For:
			if err = checkExpr(x.Iter, soft); err == nil {
				if err = checkExpr(x.Cond, false); err == nil {
					if err = checkUnknown(x.Body, false); err == nil {
						err = checkUnknown(x.Els, false)
					}
				}
			}
		case Set:
			if err = checkExpr(x.E, soft); err == nil {
				err = checkUnknown(x.Body, false)
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func checkExpr(e *Expr, soft bool) error {
	if e == nil {
		return nil
	}
	soft = soft || e.Op == OpCond
	if e.Unknown && !soft {
		what := "filter"
		if e.Op == OpTest {
			what = "test"
		}
		return lex.Errorf(e.Line, "no %s named '%s'", what, e.Name)
	}
	for _, c := range [...]*Expr{e.A, e.B, e.C} {
		if err := checkExpr(c, soft); err != nil {
			return err
		}
	}
	for _, c := range e.List {
		if err := checkExpr(c, soft); err != nil {
			return err
		}
	}
	for _, k := range e.Kw {
		if err := checkExpr(k.E, soft); err != nil {
			return err
		}
	}
	return nil
}

// The filters and tests earlyinit's Jinja has, each with Jinja2 3.1's
// parameters and meaning (jinja2/filters.py, jinja2/tests.py).
const (
	filterNames = "abs capitalize count d default dictsort e escape first float indent int items join last length list lower max min replace reverse round safe sort string sum title tojson trim unique upper"
	testNames   = "boolean defined divisibleby eq equalto even false float ge greaterthan gt in integer iterable le lessthan lower lt mapping ne none number odd sequence string true undefined upper"
	// Jinja's own that earlyinit leaves out.
	otherFilters = "attr batch center filesizeformat forceescape format groupby map pprint random reject rejectattr select selectattr slice striptags truncate urlencode urlize wordcount wordwrap xmlattr"
	otherTests   = "callable escaped filter sameas test"
)

// FilterNames lists the filters supported.
func FilterNames() []string { return strings.Fields(filterNames) }

func inList(list, name string) bool { return slices.Contains(strings.Fields(list), name) }

// checkFilter refuses a filter of Jinja's earlyinit leaves out, and
// tells one Jinja does not have either (unknown: see checkUnknown).
func checkFilter(name string, line int) (unknown bool, err error) {
	switch {
	case inList(filterNames, name):
		return false, nil
	case inList(otherFilters, name):
		return false, lex.Errorf(line, "the filter '%s' is not supported by earlyinit's Jinja", name)
	}
	return true, nil
}

func checkTest(name string, line int) (unknown bool, err error) {
	switch {
	case inList(testNames, name):
		return false, nil
	case inList(otherTests, name):
		return false, lex.Errorf(line, "the test '%s' is not supported by earlyinit's Jinja", name)
	}
	return true, nil
}
