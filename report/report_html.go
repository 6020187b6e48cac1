package report

import (
	"encoding/base64"
	"html/template"
	"io"
	"strings"
)

// htmlFigure is a figure rendered for embedding.
type htmlFigure struct {
	Title string
	Src   template.URL
}

// WriteHTML renders the report as one self-contained HTML page: CSS inline and
// plots embedded as PNG data: URIs, so the file opens anywhere with no network.
func (r *Document) WriteHTML(w io.Writer) error {
	var figs []htmlFigure
	for _, f := range r.figures {
		png, err := r.png(f)
		if err != nil {
			return err
		}
		figs = append(figs, htmlFigure{
			Title: f.Title,
			// Built from base64 only, so it cannot break out of the attribute.
			Src: template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(png)),
		})
	}
	// The plots come right after the numbers they draw (the operations), before
	// the diagnosis, or last when there are no ops (a disk probe); the file list of
	// the Plots section is for text renderings only.
	var before, after []section
	seenOps := false
	for _, s := range r.sections() {
		switch {
		case s.Title == "Plots":
		case seenOps:
			after = append(after, s)
		default:
			before = append(before, s)
			seenOps = s.Title == "Operations"
		}
	}
	return htmlTmpl.Execute(w, map[string]any{
		"R": r, "Status": r.status(), "Before": before, "After": after, "Figures": figs,
	})
}

var htmlTmpl = template.Must(template.New("report").Funcs(template.FuncMap{
	"upper": strings.ToUpper,
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>etcdperf report: {{.R.Command}}</title>
<style>
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: #1d2330; background: #f5f6f8; margin: 0; }
main { max-width: 1000px; margin: 0 auto; padding: 24px 28px 48px; background: #fff; min-height: 100vh; box-shadow: 0 0 12px rgba(0,0,0,.06); }
h1 { font-size: 24px; margin: 0 0 4px; display: flex; align-items: center; gap: 12px; }
h2 { font-size: 18px; margin: 28px 0 8px; padding-bottom: 4px; border-bottom: 2px solid #e3e6eb; }
p { margin: 6px 0; }
table { border-collapse: collapse; margin: 8px 0 12px; font-variant-numeric: tabular-nums; max-width: 100%; }
th, td { border: 1px solid #dfe2e7; padding: 4px 10px; text-align: left; }
th { background: #eef1f5; font-weight: 600; }
td { overflow-wrap: anywhere; }
pre { background: #f2f4f7; border: 1px solid #e3e6eb; padding: 8px 10px; overflow-x: auto; font-size: 13px; }
.pill { display: inline-block; padding: 2px 10px; border-radius: 12px; font-size: 13px; font-weight: 700; letter-spacing: .04em; color: #fff; background: #6b7280; }
.graded { padding: 6px 10px; border-left: 5px solid #6b7280; background: #f4f5f7; }
.pass, .ok, .valid { --c: #1a7f37; } .warn, .interrupted { --c: #b26b00; } .fail, .invalid { --c: #c2261d; } .unknown { --c: #6b7280; }
.pill.pass, .pill.ok, .pill.valid, .pill.warn, .pill.interrupted, .pill.fail, .pill.invalid, .pill.unknown { background: var(--c); }
.graded.pass, .graded.ok, .graded.valid, .graded.warn, .graded.interrupted, .graded.fail, .graded.invalid, .graded.unknown { border-left-color: var(--c); }
figure { margin: 16px 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #e3e6eb; }
figcaption { color: #5b6270; font-size: 13px; }
footer { margin-top: 32px; color: #8a909c; font-size: 12px; }
</style>
</head>
<body>
<main>
<h1>etcdperf report: {{.R.Command}} <span class="pill {{.Status}}">{{upper .Status}}</span></h1>
{{range .Before}}{{template "section" .}}{{end}}
{{if .Figures}}<section>
<h2>Plots</h2>
{{range .Figures}}<figure><img src="{{.Src}}" alt="{{.Title}}"><figcaption>{{.Title}}</figcaption></figure>
{{end}}</section>{{end}}
{{range .After}}{{template "section" .}}{{end}}
<footer>Written by etcdperf. Latencies in milliseconds.</footer>
</main>
</body>
</html>
{{define "section"}}<section>
<h2>{{.Title}}</h2>
{{range .Blocks}}{{if .Table}}<table>
<thead><tr>{{range .Table.Head}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>{{range .Table.Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>{{end}}</tbody>
</table>
{{else if .Code}}<pre><code>{{.Code}}</code></pre>
{{else if .Grade}}<p class="graded {{.Grade}}">{{.Text}}</p>
{{else}}<p>{{.Text}}</p>
{{end}}{{end}}
</section>
{{end}}`))
