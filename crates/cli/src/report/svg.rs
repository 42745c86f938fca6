//! The `--plot` SVG: one panel per section, each row's percentile
//! spectrum on a log latency axis.

use super::*;

/// One line of a plot: a row's percentile spectrum as (x, log10 ns) points,
/// x being log10(1/(1-p)).
struct Series {
    name: String,
    points: Vec<(f64, f64)>,
}

/// A section's series, drawn as one panel.
struct Panel {
    title: String,
    series: Vec<Series>,
}

/// Qualitative colours that stay apart from each other and readable on
/// white (Tableau 10 with its pale yellow and grey darkened); past ten
/// series the colours repeat with dashed, then dotted lines.
const PALETTE: [(u8, u8, u8); 10] = [
    (0x4E, 0x79, 0xA7),
    (0xF2, 0x8E, 0x2B),
    (0xE1, 0x57, 0x59),
    (0x76, 0xB7, 0xB2),
    (0x59, 0xA1, 0x4F),
    (0xB6, 0x99, 0x2D),
    (0xB0, 0x7A, 0xA1),
    (0xFF, 0x9D, 0xA7),
    (0x9C, 0x75, 0x5F),
    (0x79, 0x70, 0x6E),
];

/// How series `i` is drawn: a palette colour and a dash pattern (none,
/// dashed, dotted) as (dash length, gap) in pixels.
pub(super) fn series_style(i: usize) -> (plotters::style::RGBColor, Option<(u32, u32)>) {
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
    let (v, unit) = perfkit_measure::report::scale_ns(ns);
    let text = format!("{v:.2}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text} {unit}")
}

/// Shortens `s` to `max` characters with an ellipsis, for legend entries
/// and panel titles that must fit their box.
fn fit(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_owned()
    } else {
        let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// Width of the whole plot, and of each panel's legend column.
const PLOT_WIDTH: u32 = 1100;
const LEGEND_WIDTH: u32 = 360;
/// Height of one legend entry, and the least height of a panel.
const LEGEND_LINE: u32 = 17;
const PANEL_MIN_HEIGHT: u32 = 330;
const TITLE_HEIGHT: u32 = 44;

/// Draws each section's histograms as one panel of a tall SVG: x is the
/// percentile on the log(1/(1-p)) axis HdrHistogram plots use, y the
/// latency on a log axis with unit-aware ticks (ns, µs, ms, s); each panel
/// has its own legend beside it, one entry per row.
pub fn render_svg(report: &Report) -> Result<String> {
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
                    // Percentiles beyond 1 - 1/count are the maximum
                    // repeated, not information: the line stops there.
                    points: h
                        .iter_quantiles(5)
                        .map(|v| v.quantile_iterated_to())
                        .map(|q| q.min(1.0 - 1.0 / h.len().max(2) as f64))
                        .map(|q| {
                            (
                                (1.0 / (1.0 - q)).log10(),
                                (h.value_at_quantile(q).max(1) as f64).log10(),
                            )
                        })
                        .collect(),
                })
                .collect(),
        })
        .filter(|p| !p.series.is_empty())
        .collect();
    let heights: Vec<u32> = panels
        .iter()
        .map(|p| PANEL_MIN_HEIGHT.max(60 + LEGEND_LINE * p.series.len() as u32))
        .collect();
    let total = TITLE_HEIGHT + heights.iter().sum::<u32>().max(PANEL_MIN_HEIGHT);
    let err = |e: DrawingAreaErrorKind<_>| anyhow::anyhow!("plot: {e}");
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
            draw_panel(&area, panel)?;
        }
        root.present().map_err(err)?;
    }
    Ok(svg)
}

fn draw_panel<DB: plotters::prelude::DrawingBackend>(
    area: &plotters::prelude::DrawingArea<DB, plotters::coord::Shift>,
    panel: &Panel,
) -> Result<()> {
    use plotters::prelude::*;
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| anyhow::anyhow!("plot: {e}");
    let (chart_area, legend_area) = area.split_horizontally(PLOT_WIDTH - LEGEND_WIDTH);
    let all = || panel.series.iter().flat_map(|s| s.points.iter());
    let x_max = all().map(|p| p.0).fold(1.0f64, f64::max).ceil();
    // Whole decades, at least two, so every y tick is 1, 10 or 100 of a
    // unit.
    let y_lo = all().map(|p| p.1).fold(f64::INFINITY, f64::min).floor();
    let mut y_hi = all().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max).ceil();
    if y_hi - y_lo < 2.0 {
        y_hi = y_lo + 2.0;
    }
    let mut chart = ChartBuilder::on(&chart_area)
        .caption(fit(&panel.title, 90), ("sans-serif", 17))
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
        match dash {
            None => chart
                .draw_series(LineSeries::new(pts, style))
                .map_err(err)?,
            Some((len, gap)) => chart
                .draw_series(DashedLineSeries::new(pts, len, gap, style))
                .map_err(err)?,
        };
    }
    // The legend: its own column, one entry per series, so it never
    // covers the lines and always fits (the panel grows with it).
    let font = ("sans-serif", 13).into_font();
    for (i, s) in panel.series.iter().enumerate() {
        let (color, dash) = series_style(i);
        let y = 48 + (i as u32 * LEGEND_LINE) as i32;
        let style = color.stroke_width(3);
        match dash {
            None => legend_area
                .draw(&PathElement::new(vec![(8, y), (40, y)], style))
                .map_err(err)?,
            Some((len, gap)) => {
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
        legend_area
            .draw(&Text::new(fit(&s.name, 44), (48, y - 7), font.clone()))
            .map_err(err)?;
    }
    Ok(())
}
