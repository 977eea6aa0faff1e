// Package theme holds every colour and style of the dashboard: a light and
// a dark palette, the choice between them, NO_COLOR, the colour that labels
// each source, and Safe, which makes outside text fit to print on any
// terminal. Nothing else: no layout, no widgets.
package theme

import (
	"hash/fnv"
	"image/color"
	"os"
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"
)

// Mode picks a palette.
type Mode int

// Palette modes: Auto follows the terminal's background (see New and
// Options.Resolve).
const (
	Auto Mode = iota
	Light
	Dark
)

// ParseMode reads the --theme flag: "", "auto", "light" or "dark".
func ParseMode(s string) (Mode, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "auto":
		return Auto, true
	case "light":
		return Light, true
	case "dark":
		return Dark, true
	}
	return Auto, false
}

// Options choose the styles.
type Options struct {
	Mode Mode
	// NoColor drops every colour; the selected row stays visible through
	// reverse video and bold. FromEnv sets it from NO_COLOR.
	NoColor bool
	// SourceColors names a label colour per source ("red", "#ff5f5f", "196")
	// so that production is never mistaken for staging. Others get a
	// stable colour picked from their name.
	SourceColors map[string]string
}

// Resolve turns Auto into the palette of a background the terminal
// reported; Light and Dark stay as chosen.
func (o Options) Resolve(dark bool) Options {
	if o.Mode == Auto {
		o.Mode = Light
		if dark {
			o.Mode = Dark
		}
	}
	return o
}

// envDark reads COLORFGBG ("15;0", "default;default;0") as termenv did
// for Bubble Tea v1: its last field is the background's colour number; 0–6
// are dark, 7–15 light, a 256-colour one dark when its lightness is under
// half. Unset or unreadable: dark.
func envDark(fgbg string) bool {
	bg, err := strconv.Atoi(fgbg[strings.LastIndexByte(fgbg, ';')+1:])
	switch {
	case err != nil || bg < 0 || bg > 255:
		return true
	case bg < 16:
		return bg < 7
	}
	r, g, b, _ := lipgloss.Color(strconv.Itoa(bg)).RGBA()
	return max(r, g, b)+min(r, g, b) < 0xffff
}

// FromEnv fills NoColor from the NO_COLOR convention (https://no-color.org).
func (o Options) FromEnv() Options {
	if os.Getenv("NO_COLOR") != "" {
		o.NoColor = true
	}
	return o
}

// Palette is the set of colours one background needs.
type Palette struct {
	Text, Muted, Faint, Accent, Border color.Color
	SelectedText, SelectedBg           color.Color
	OK, Warn, Danger, Info             color.Color
	BannerText, BannerBg               color.Color
	Labels                             []color.Color // source label colours
}

// DarkPalette is for dark terminal backgrounds.
func DarkPalette() Palette {
	return Palette{
		Text: lipgloss.Color("252"), Muted: lipgloss.Color("245"), Faint: lipgloss.Color("240"),
		Accent: lipgloss.Color("111"), Border: lipgloss.Color("238"),
		SelectedText: lipgloss.Color("231"), SelectedBg: lipgloss.Color("24"),
		OK: lipgloss.Color("78"), Warn: lipgloss.Color("221"), Danger: lipgloss.Color("203"), Info: lipgloss.Color("117"),
		BannerText: lipgloss.Color("231"), BannerBg: lipgloss.Color("124"),
		Labels: colors("75", "114", "180", "176", "80", "215"),
	}
}

// LightPalette is for light terminal backgrounds.
func LightPalette() Palette {
	return Palette{
		Text: lipgloss.Color("235"), Muted: lipgloss.Color("242"), Faint: lipgloss.Color("248"),
		Accent: lipgloss.Color("25"), Border: lipgloss.Color("250"),
		SelectedText: lipgloss.Color("16"), SelectedBg: lipgloss.Color("153"),
		OK: lipgloss.Color("28"), Warn: lipgloss.Color("130"), Danger: lipgloss.Color("160"), Info: lipgloss.Color("31"),
		BannerText: lipgloss.Color("231"), BannerBg: lipgloss.Color("160"),
		Labels: colors("25", "28", "94", "91", "30", "166"),
	}
}

func colors(codes ...string) []color.Color {
	out := make([]color.Color, len(codes))
	for i, c := range codes {
		out[i] = lipgloss.Color(c)
	}
	return out
}

// Styles is every style the dashboard draws with.
type Styles struct {
	Dark    bool
	NoColor bool

	Title, Tab, TabActive          lipgloss.Style
	Header, Cell, Selected, Cursor lipgloss.Style
	Muted, Faint, Accent           lipgloss.Style
	OK, Warn, Danger, Info         lipgloss.Style
	Banner, Notice                 lipgloss.Style
	Footer, FilterPrompt           lipgloss.Style
	Dialog, DialogTitle, Field     lipgloss.Style
	Key, KeyDesc                   lipgloss.Style
	BarFull                        lipgloss.Style

	labels    []color.Color
	named     map[string]color.Color
	labelBase lipgloss.Style
}

// New builds the styles. It never asks the terminal: Auto reads the
// background from COLORFGBG where the terminal sets it, and is dark
// otherwise. The dashboard asks the terminal for its background without
// waiting (Bubble Tea's background-colour request) and, when the answer
// comes, builds the styles again with Resolve.
func New(o Options) *Styles {
	dark := true
	switch o.Mode {
	case Light:
		dark = false
	case Auto:
		dark = envDark(os.Getenv("COLORFGBG"))
	}
	p := DarkPalette()
	if !dark {
		p = LightPalette()
	}
	return build(p, dark, o)
}

func build(p Palette, dark bool, o Options) *Styles {
	c := func(col color.Color) color.Color {
		if o.NoColor {
			return lipgloss.NoColor{}
		}
		return col
	}
	fg := func(col color.Color) lipgloss.Style { return lipgloss.NewStyle().Foreground(c(col)) }
	s := &Styles{Dark: dark, NoColor: o.NoColor}
	s.Title = fg(p.Accent).Bold(true)
	s.Tab = fg(p.Muted)
	s.TabActive = fg(p.Accent).Bold(true).Underline(true)
	s.Header = fg(p.Muted).Bold(true)
	s.Cell = fg(p.Text)
	s.Selected = lipgloss.NewStyle().Foreground(c(p.SelectedText)).Background(c(p.SelectedBg)).Bold(true)
	if o.NoColor {
		s.Selected = lipgloss.NewStyle().Reverse(true).Bold(true)
	}
	s.Cursor = fg(p.Accent).Bold(true)
	s.Muted = fg(p.Muted)
	s.Faint = fg(p.Faint)
	s.Accent = fg(p.Accent)
	s.OK = fg(p.OK)
	s.Warn = fg(p.Warn).Bold(true)
	s.Danger = fg(p.Danger).Bold(true)
	s.Info = fg(p.Info)
	s.Banner = lipgloss.NewStyle().Foreground(c(p.BannerText)).Background(c(p.BannerBg)).Bold(true)
	if o.NoColor {
		s.Banner = lipgloss.NewStyle().Reverse(true)
	}
	s.Notice = fg(p.Info)
	s.Footer = fg(p.Muted)
	s.FilterPrompt = fg(p.Accent).Bold(true)
	s.Dialog = lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(c(p.Accent)).Padding(0, 1)
	s.DialogTitle = fg(p.Accent).Bold(true)
	s.Field = fg(p.Muted)
	s.Key = fg(p.Accent).Bold(true)
	s.KeyDesc = fg(p.Muted)
	s.BarFull = fg(p.OK)
	s.labelBase = lipgloss.NewStyle().Bold(true)
	for _, l := range p.Labels {
		s.labels = append(s.labels, c(l))
	}
	s.named = map[string]color.Color{}
	for name, col := range o.SourceColors {
		s.named[name] = c(namedColor(col, dark))
	}
	return s
}

// Source is the label style of a source: its configured colour, or one
// picked from its name so it stays the same across runs.
func (s *Styles) Source(name string) lipgloss.Style {
	if col, ok := s.named[name]; ok {
		return s.labelBase.Foreground(col)
	}
	if len(s.labels) == 0 {
		return s.labelBase
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(name))
	return s.labelBase.Foreground(s.labels[h.Sum32()%uint32(len(s.labels))])
}

// Level is the style of an escalation level by its rung (0 none … 4
// escalated), so severity reads at a glance.
func (s *Styles) Level(rung int) lipgloss.Style {
	switch {
	case rung >= 3:
		return s.Danger
	case rung >= 1:
		return s.Warn
	}
	return s.Cell
}

// namedColor turns a config colour into a terminal colour: a few names
// people write in YAML, else whatever lipgloss accepts (hex or ANSI code).
func namedColor(name string, dark bool) color.Color {
	pick := func(d, l string) color.Color {
		if dark {
			return lipgloss.Color(d)
		}
		return lipgloss.Color(l)
	}
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "red":
		return pick("203", "160")
	case "green":
		return pick("78", "28")
	case "yellow":
		return pick("221", "136")
	case "blue":
		return pick("75", "25")
	case "magenta", "purple":
		return pick("176", "91")
	case "cyan":
		return pick("80", "30")
	case "orange":
		return pick("215", "166")
	case "gray", "grey":
		return pick("245", "242")
	}
	return lipgloss.Color(name)
}
