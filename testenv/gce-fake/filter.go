package main

// The list filter of the Compute Engine API, the subset clients send for
// routes and instances: one or more `(field eq|ne value)` terms joined by AND
// (Google's "filter" parameter; a string value is an RE2 expression that must
// match the whole field, and may be quoted). k8s-cloud-provider builds this
// syntax but has no parser, and its filter.F matches unanchored, so each value
// is anchored here to keep the API's whole-field semantics.

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/GoogleCloudPlatform/k8s-cloud-provider/pkg/cloud/filter"
)

var term = regexp.MustCompile(`^\s*\(?\s*([A-Za-z][A-Za-z0-9_.]*)\s+(eq|ne)\s+("(?:[^"\\]|\\.)*"|[^()\s]+)\s*\)?\s*`)

// parseFilter returns filter.None for an empty expression, or an error for
// anything outside the subset (the API answers 400 invalid).
func parseFilter(expr string) (*filter.F, error) {
	rest := strings.TrimSpace(expr)
	if rest == "" {
		return filter.None, nil
	}
	var f *filter.F
	for rest != "" {
		m := term.FindStringSubmatch(rest)
		if m == nil {
			return nil, fmt.Errorf("Invalid list filter expression '%s'.", expr)
		}
		rest = strings.TrimSpace(rest[len(m[0]):])
		if strings.HasPrefix(rest, "AND ") {
			rest = strings.TrimSpace(rest[4:])
		}
		value := m[3]
		if strings.HasPrefix(value, `"`) {
			value = strings.ReplaceAll(value[1:len(value)-1], `\"`, `"`)
		}
		if _, err := regexp.Compile(value); err != nil {
			return nil, fmt.Errorf("Invalid list filter expression '%s': %v", expr, err)
		}
		anchored := "^(?:" + value + ")$"
		if f == nil {
			f = &filter.F{}
		}
		if m[2] == "eq" {
			f = f.AndRegexp(m[1], anchored)
		} else {
			f = f.AndNotRegexp(m[1], anchored)
		}
	}
	return f, nil
}
