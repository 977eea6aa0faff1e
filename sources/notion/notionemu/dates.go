package notionemu

import (
	"encoding/json"
	"time"
)

// instant is a point or a day in time as Notion dates and date filters
// carry them: "2026-02-01" is a whole day, "2026-02-01T02:15:00Z" a moment.
type instant struct {
	t        time.Time
	dateOnly bool
}

const dateLayout = "2006-01-02"

// parseInstant accepts the ISO 8601 forms Notion accepts. A date-time
// without an offset is read in loc.
func parseInstant(s string, loc *time.Location) (instant, bool) {
	if t, err := time.ParseInLocation(dateLayout, s, time.UTC); err == nil {
		return instant{t: t, dateOnly: true}, true
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return instant{t: t}, true
		}
	}
	return instant{}, false
}

// String renders the instant as Notion returns date values: a bare day, or
// a date-time with milliseconds and a numeric offset.
func (i instant) String() string {
	if i.dateOnly {
		return i.t.Format(dateLayout)
	}
	return i.t.Format("2006-01-02T15:04:05.000-07:00")
}

// compare orders the instant against a filter value: to the millisecond,
// as Notion's date filter compares a date-time. When either side is a
// bare day the comparison is by UTC calendar day, so that "on_or_after
// 2026-02-01" includes every moment of that day.
func (i instant) compare(f instant) int {
	a, b := i.t.Truncate(time.Millisecond), f.t.Truncate(time.Millisecond)
	if i.dateOnly || f.dateOnly {
		a, b = a.UTC().Truncate(24*time.Hour), b.UTC().Truncate(24*time.Hour)
	}
	return a.Compare(b)
}

// dateValue is a date property's value.
type dateValue struct {
	start    instant
	end      *instant
	timeZone string
}

func (d *dateValue) json() any {
	if d == nil {
		return nil
	}
	out := map[string]any{"start": d.start.String(), "end": nil, "time_zone": nullable(d.timeZone)}
	if d.end != nil {
		out["end"] = d.end.String()
	}
	return out
}

// parseDate validates {"start": …, "end": …, "time_zone": …}; null clears.
func parseDate(raw json.RawMessage, path string) (*dateValue, error) {
	if isNull(raw) {
		return nil, nil
	}
	o, err := asObject(raw, path)
	if err != nil {
		return nil, err
	}
	if err := o.onlyKeys(path, "start", "end", "time_zone"); err != nil {
		return nil, err
	}
	d := &dateValue{}
	loc := time.UTC
	if tz, ok := o["time_zone"]; ok && !isNull(tz) {
		if d.timeZone, err = asString(tz, path+".time_zone"); err != nil {
			return nil, err
		}
		if loc, err = time.LoadLocation(d.timeZone); err != nil || d.timeZone == "" {
			return nil, validationError("body failed validation: %s.time_zone should be an IANA time zone, instead was `%q`.", path, d.timeZone)
		}
	}
	start, err := asString(o["start"], path+".start")
	if err != nil {
		return nil, err
	}
	var ok bool
	if d.start, ok = parseInstant(start, loc); !ok {
		return nil, validationError("body failed validation: %s.start should be a valid ISO 8601 date string, instead was `%q`.", path, start)
	}
	if e, present := o["end"]; present && !isNull(e) {
		end, err := asString(e, path+".end")
		if err != nil {
			return nil, err
		}
		ei, ok := parseInstant(end, loc)
		if !ok {
			return nil, validationError("body failed validation: %s.end should be a valid ISO 8601 date string, instead was `%q`.", path, end)
		}
		d.end = &ei
	}
	return d, nil
}
