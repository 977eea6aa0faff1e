package notionemu

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf16"
)

// Notion's documented size limits for rich text.
const (
	maxTextContent = 2000 // per text object, counted in UTF-16 code units as JavaScript counts
	maxRichTexts   = 100  // text objects per array
)

// richText is one text object of a title, rich_text or comment value.
type richText struct {
	Content     string
	Link        string
	Annotations annotations
}

type annotations struct {
	Bold          bool   `json:"bold"`
	Italic        bool   `json:"italic"`
	Strikethrough bool   `json:"strikethrough"`
	Underline     bool   `json:"underline"`
	Code          bool   `json:"code"`
	Color         string `json:"color"`
}

// plainText is a single unannotated text object, or none for "".
func plainText(s string) []richText {
	if s == "" {
		return nil
	}
	return []richText{{Content: s, Annotations: annotations{Color: "default"}}}
}

func joinPlain(texts []richText) string {
	var b strings.Builder
	for _, t := range texts {
		b.WriteString(t.Content)
	}
	return b.String()
}

// textArrayJSON renders text objects in the shape Notion returns:
// {"type":"text","text":{"content":"…","link":null},"annotations":{…},
// "plain_text":"…","href":null}.
func textArrayJSON(texts []richText) []any {
	out := make([]any, len(texts))
	for i, t := range texts {
		var link, href any
		if t.Link != "" {
			link, href = map[string]any{"url": t.Link}, t.Link
		}
		out[i] = map[string]any{
			"type":        "text",
			"text":        map[string]any{"content": t.Content, "link": link},
			"annotations": t.Annotations,
			"plain_text":  t.Content,
			"href":        href,
		}
	}
	return out
}

// parseTextArray validates an array of rich text objects from a request.
// Only "text" objects are emulated; mentions and equations are refused.
func parseTextArray(raw json.RawMessage, path string) ([]richText, error) {
	items, err := asArray(raw, path)
	if err != nil {
		return nil, err
	}
	if len(items) > maxRichTexts {
		return nil, validationError("body failed validation: %s.length should be ≤ `%d`, instead was `%d`.", path, maxRichTexts, len(items))
	}
	texts := make([]richText, 0, len(items))
	for i, item := range items {
		t, err := parseText(item, fmt.Sprintf("%s[%d]", path, i))
		if err != nil {
			return nil, err
		}
		texts = append(texts, t)
	}
	return texts, nil
}

func parseText(raw json.RawMessage, path string) (richText, error) {
	o, err := asObject(raw, path)
	if err != nil {
		return richText{}, err
	}
	if err := o.onlyKeys(path, "type", "text", "annotations", "plain_text", "href"); err != nil {
		return richText{}, err
	}
	if typ, ok := o["type"]; ok {
		s, err := asString(typ, path+".type")
		if err != nil {
			return richText{}, err
		}
		if s != "text" {
			return richText{}, validationError("body failed validation: %s.type should be `text` (the emulator models text objects only), instead was `%s`.", path, s)
		}
	}
	text, err := asObject(o["text"], path+".text")
	if err != nil {
		return richText{}, err
	}
	if err := text.onlyKeys(path+".text", "content", "link"); err != nil {
		return richText{}, err
	}
	t := richText{Annotations: annotations{Color: "default"}}
	if t.Content, err = asString(text["content"], path+".text.content"); err != nil {
		return richText{}, err
	}
	if n := len(utf16.Encode([]rune(t.Content))); n > maxTextContent {
		return richText{}, validationError("body failed validation: %s.text.content.length should be ≤ `%d`, instead was `%d`.", path, maxTextContent, n)
	}
	if l, ok := text["link"]; ok && !isNull(l) {
		lo, err := asObject(l, path+".text.link")
		if err != nil {
			return richText{}, err
		}
		if t.Link, err = asString(lo["url"], path+".text.link.url"); err != nil {
			return richText{}, err
		}
	}
	if a, ok := o["annotations"]; ok {
		if err := parseAnnotations(a, path+".annotations", &t.Annotations); err != nil {
			return richText{}, err
		}
	}
	return t, nil
}

func parseAnnotations(raw json.RawMessage, path string, a *annotations) error {
	o, err := asObject(raw, path)
	if err != nil {
		return err
	}
	flags := map[string]*bool{
		"bold": &a.Bold, "italic": &a.Italic, "strikethrough": &a.Strikethrough,
		"underline": &a.Underline, "code": &a.Code,
	}
	for k, v := range o {
		if k == "color" {
			if a.Color, err = asString(v, path+".color"); err != nil {
				return err
			}
			continue
		}
		flag, ok := flags[k]
		if !ok {
			return validationError("body failed validation: %s.%s should not be present.", path, k)
		}
		if *flag, err = asBool(v, path+"."+k); err != nil {
			return err
		}
	}
	return nil
}
