//! The `--plot` SVG: one panel per section, each row's percentile
//! spectrum on a log latency axis.

use hdrhistogram::Histogram;

use crate::model::Report;
use crate::units::scale_ns;

/// Why a plot could not be drawn: what plotters said.
#[derive(Debug, thiserror::Error)]
#[error("plot: {0}")]
pub struct PlotError(String);

/// One line of a plot: a row's percentile spectrum as (x, log10 ns) points,
/// x being log10(1/(1-p)).
struct Series {
    name: String,
    points: Vec<(f64, f64)>,
    /// Too few samples for a curve: drawn as points.
    sparse: bool,
}

/// A section's series, drawn as one panel.
struct Panel {
    title: String,
    series: Vec<Series>,
}

/// Qualitative colours chosen to be told apart, also with the common
/// colour-vision deficiencies, and to read on white: Paul Tol's "muted"
/// scheme (nine colours) and black. Past ten series the colours repeat
/// with dashed, then dotted lines.
const PALETTE: [(u8, u8, u8); 10] = [
    (0x33, 0x22, 0x88),
    (0xCC, 0x66, 0x77),
    (0x11, 0x77, 0x33),
    (0x88, 0xCC, 0xEE),
    (0x88, 0x22, 0x55),
    (0xDD, 0xCC, 0x77),
    (0x44, 0xAA, 0x99),
    (0x99, 0x99, 0x33),
    (0xAA, 0x44, 0x99),
    (0x00, 0x00, 0x00),
];

/// Below this many samples a row is drawn as points: a curve through a
/// handful of samples would suggest a distribution that was not measured.
const CURVE_SAMPLES: u64 = 100;

/// A histogram's percentile spectrum as (log10(1/(1-p)), log10 ns)
/// points, five per halving of the distance to 100 %. Percentiles beyond
/// 1 - 1/count are the maximum repeated, not information: it stops there.
fn spectrum(h: &Histogram<u64>) -> Vec<(f64, f64)> {
    let last = 1.0 - 1.0 / h.len().max(2) as f64;
    h.iter_quantiles(5)
        .map(|v| v.quantile_iterated_to().min(last))
        .map(|q| {
            (
                (1.0 / (1.0 - q)).log10(),
                (h.value_at_quantile(q).max(1) as f64).log10(),
            )
        })
        .collect()
}

/// One point per sample: the k-th smallest of n at percentile (k-1)/n, so
/// the smallest sits at 0 % and the largest at 1 - 1/n, where a curve
/// would stop.
fn sample_points(h: &Histogram<u64>) -> Vec<(f64, f64)> {
    let n = h.len() as f64;
    let mut below = 0u64;
    let mut points = Vec::new();
    for v in h.iter_recorded() {
        let value = (v.value_iterated_to().max(1) as f64).log10();
        for _ in 0..v.count_at_value() {
            let p = below as f64 / n;
            points.push(((1.0 / (1.0 - p)).log10(), value));
            below += 1;
        }
    }
    points
}

/// How series `i` is drawn: a palette colour and a dash pattern (none,
/// dashed, dotted) as (dash length, gap) in pixels.
pub(crate) fn series_style(i: usize) -> (plotters::style::RGBColor, Option<(u32, u32)>) {
    let (r, g, b) = PALETTE[i % PALETTE.len()];
    let dash = match (i / PALETTE.len()) % 3 {
        0 => None,
        1 => Some((9, 5)),
        _ => Some((2, 4)),
    };
    (plotters::style::RGBColor(r, g, b), dash)
}

/// A tick label for a latency axis: the unit chosen for the value and no
/// needless digits ("1 µs", "20 ms", "500 ns").
pub fn format_tick_ns(ns: f64) -> String {
    if !ns.is_finite() || ns <= 0.0 {
        return "-".into();
    }
    let (v, unit) = scale_ns(ns);
    let text = format!("{v:.2}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text} {unit}")
}

/// `s` wrapped at spaces into lines of at most `max` characters (a word
/// longer than that keeps a line of its own, whole), for legend entries
/// and panel titles: nothing is cut.
fn wrap(s: &str, max: usize) -> Vec<String> {
    textwrap::wrap(s, textwrap::Options::new(max).break_words(false))
        .into_iter()
        .map(|l| l.into_owned())
        .collect()
}

/// Width of the whole plot, and of each panel's legend column.
const PLOT_WIDTH: u32 = 1100;
const LEGEND_WIDTH: u32 = 360;
/// Characters of a legend line at its 13 px font in [`LEGEND_WIDTH`].
const LEGEND_CHARS: usize = 44;
/// Height of one legend entry, and the least height of a panel.
const LEGEND_LINE: u32 = 17;
const PANEL_MIN_HEIGHT: u32 = 330;
const TITLE_HEIGHT: u32 = 44;

/// Draws each section's histograms as one panel of a tall SVG: x is the
/// percentile on the log(1/(1-p)) axis HdrHistogram plots use, y the
/// latency on a log axis with unit-aware ticks (ns, µs, ms, s); each panel
/// has its own legend beside it, one entry per row.
pub fn render_svg(report: &Report) -> Result<String, PlotError> {
    use plotters::prelude::*;
    let panels: Vec<Panel> = report
        .sections
        .iter()
        .map(|sec| Panel {
            title: sec.name.clone(),
            series: sec
                .rows
                .iter()
                .filter_map(|r| r.latency.as_ref().map(|h| (r, h)))
                .filter(|(_, h)| !h.is_empty())
                .map(|(r, h)| Series {
                    name: r.name.clone(),
                    sparse: h.len() < CURVE_SAMPLES,
                    // Percentiles beyond 1 - 1/count are the maximum
                    // repeated, not information: the line stops there.
                    points: if h.len() < CURVE_SAMPLES {
                        sample_points(h)
                    } else {
                        spectrum(h)
                    },
                })
                .collect(),
        })
        .filter(|p| !p.series.is_empty())
        .collect();
    let heights: Vec<u32> = panels
        .iter()
        .map(|p| {
            // The note on dots takes up to three lines.
            let lines: usize = p
                .series
                .iter()
                .map(|s| legend_lines(s).len())
                .sum::<usize>()
                + 3;
            PANEL_MIN_HEIGHT.max(60 + LEGEND_LINE * (lines + p.series.len()) as u32)
        })
        .collect();
    // One percentile axis for every panel, so panels compare at a glance:
    // up to the deepest percentile any row has the samples for.
    let x_max = panels
        .iter()
        .flat_map(|p| p.series.iter().flat_map(|s| s.points.iter()))
        .map(|p| p.0)
        .fold(1.0f64, f64::max)
        .ceil();
    let total = TITLE_HEIGHT + heights.iter().sum::<u32>().max(PANEL_MIN_HEIGHT);
    let err = |e: DrawingAreaErrorKind<_>| PlotError(e.to_string());
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (PLOT_WIDTH, total)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        root.draw(&Text::new(
            format!(
                "perfkit {}: latency by percentile, one panel per section (log scale)",
                report.command
            ),
            (16, 12),
            ("sans-serif", 20).into_font(),
        ))
        .map_err(err)?;
        if panels.is_empty() {
            root.draw(&Text::new(
                "no latency histograms in this report",
                (16, TITLE_HEIGHT as i32 + 20),
                ("sans-serif", 16).into_font(),
            ))
            .map_err(err)?;
        }
        let mut top = TITLE_HEIGHT;
        for (panel, height) in panels.iter().zip(&heights) {
            let area = root.clone().shrink((0, top), (PLOT_WIDTH, *height));
            top += height;
            draw_panel(&area, panel, x_max)?;
        }
        root.present().map_err(err)?;
    }
    Ok(svg)
}

fn draw_panel<DB: plotters::prelude::DrawingBackend>(
    area: &plotters::prelude::DrawingArea<DB, plotters::coord::Shift>,
    panel: &Panel,
    x_max: f64,
) -> Result<(), PlotError> {
    use plotters::prelude::*;
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| PlotError(e.to_string());
    let (chart_area, legend_area) = area.split_horizontally(PLOT_WIDTH - LEGEND_WIDTH);
    let all = || panel.series.iter().flat_map(|s| s.points.iter());
    // Whole decades, at least two, so every y tick is 1, 10 or 100 of a
    // unit.
    let y_lo = all().map(|p| p.1).fold(f64::INFINITY, f64::min).floor();
    let mut y_hi = all().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max).ceil();
    if y_hi - y_lo < 2.0 {
        y_hi = y_lo + 2.0;
    }
    let mut chart = ChartBuilder::on(&chart_area)
        .caption(&panel.title, ("sans-serif", 17))
        .margin(10)
        .x_label_area_size(36)
        .y_label_area_size(72)
        .build_cartesian_2d(0f64..x_max, y_lo..y_hi)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("percentile")
        .y_desc("latency")
        .x_labels(x_max as usize + 1)
        .y_labels((y_hi - y_lo) as usize + 1)
        .x_label_formatter(&|x| {
            let p = 100.0 * (1.0 - 10f64.powf(-x));
            format!("{p:.*}%", (x.round() as usize).saturating_sub(2))
        })
        .y_label_formatter(&|y| format_tick_ns(10f64.powf(*y)))
        .label_style(("sans-serif", 14))
        .axis_desc_style(("sans-serif", 14))
        .light_line_style(WHITE.mix(0.0))
        .bold_line_style(BLACK.mix(0.12))
        .draw()
        .map_err(err)?;
    for (i, s) in panel.series.iter().enumerate() {
        let (color, dash) = series_style(i);
        let style = color.stroke_width(2);
        let pts = s.points.iter().copied();
        if s.sparse {
            // Past ten series the dots change shape, as lines change dash.
            match (i / PALETTE.len()) % 3 {
                0 => chart.draw_series(pts.map(|p| Circle::new(p, 3, color.filled()))),
                1 => chart.draw_series(pts.map(|p| TriangleMarker::new(p, 4, color.filled()))),
                _ => chart.draw_series(pts.map(|p| Cross::new(p, 3, color.stroke_width(2)))),
            }
            .map_err(err)?;
            continue;
        }
        match dash {
            None => chart
                .draw_series(LineSeries::new(pts, style))
                .map_err(err)?,
            Some((len, gap)) => chart
                .draw_series(DashedLineSeries::new(pts, len, gap, style))
                .map_err(err)?,
        };
    }
    // The legend: its own column, one entry per series, its name whole on
    // as many lines as it takes, so it never covers the lines and always
    // fits (the panel grows with it).
    let font = ("sans-serif", 13).into_font();
    let mut y = 48i32;
    for (i, s) in panel.series.iter().enumerate() {
        let (color, dash) = series_style(i);
        let style = color.stroke_width(3);
        match (s.sparse, dash) {
            (true, _) => match (i / PALETTE.len()) % 3 {
                0 => legend_area.draw(&Circle::new((24, y), 4, color.filled())),
                1 => legend_area.draw(&TriangleMarker::new((24, y), 5, color.filled())),
                _ => legend_area.draw(&Cross::new((24, y), 4, color.stroke_width(2))),
            }
            .map_err(err)?,
            (false, None) => legend_area
                .draw(&PathElement::new(vec![(8, y), (40, y)], style))
                .map_err(err)?,
            (false, Some((len, gap))) => {
                let mut x = 8;
                while x < 40 {
                    let end = (x + len as i32).min(40);
                    legend_area
                        .draw(&PathElement::new(vec![(x, y), (end, y)], style))
                        .map_err(err)?;
                    x = end + gap as i32;
                }
            }
        }
        for line in legend_lines(s) {
            legend_area
                .draw(&Text::new(line, (48, y - 7), font.clone()))
                .map_err(err)?;
            y += LEGEND_LINE as i32;
        }
        // A little space between entries, so wrapped names stay apart.
        y += (LEGEND_LINE / 2) as i32;
    }
    if panel.series.iter().any(|s| s.sparse) {
        for line in wrap(SPARSE_NOTE, LEGEND_CHARS) {
            legend_area
                .draw(&Text::new(line, (8, y), font.clone()))
                .map_err(err)?;
            y += LEGEND_LINE as i32;
        }
    }
    Ok(())
}

/// Said under a legend with rows drawn as markers.
const SPARSE_NOTE: &str = "markers without a line: a row with under 100 samples, one marker per sample (too few for a curve)";

/// A series' legend text: its name whole, wrapped to the legend column.
fn legend_lines(s: &Series) -> Vec<String> {
    wrap(&s.name, LEGEND_CHARS)
}
