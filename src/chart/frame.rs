//! What every chart shares: the responsive `<svg>` shell with title, description, stylesheet,
//! hover and keyboard handling and tooltip; and the views of titles, axes, grids and legends.
//! Each chart supplies a model (a [`ChartModel`], computed in a `Memo` from its props and the
//! measured width) and a function drawing its data.

use std::any::Any;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use fmperf_chart::cartesian::{Cartesian, DrawTick, GridLine};
use fmperf_chart::layout::{Rect, SWATCH, TICK_LEN, Typography, place_tooltip, tooltip_size};
use fmperf_chart::marker::MarkerShape;
use fmperf_chart::nearest::keyboard_step;
use fmperf_chart::path::coord;
use fmperf_chart::style::live_stylesheet;
use leptos::html::Div;
use leptos::prelude::*;
use leptos::svg::Svg;
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;

use super::export::ExportButtons;

/// Width used before the container has been measured (and when it has no width, e.g. hidden).
const DEFAULT_WIDTH: f64 = 640.0;
/// Narrowest layout: below this the chart is laid out at this width and scaled down.
const MIN_WIDTH: f64 = 280.0;

/// A hover target: a point, bar segment or cell with its tooltip text.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Target {
    /// Where the tooltip points (SVG user units).
    pub anchor: (f64, f64),
    /// Tooltip lines; the first is the heading.
    pub lines: Vec<String>,
    /// How the selection is marked.
    pub mark: Mark,
}

/// How a selected target is marked.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Mark {
    /// A ring of this radius around the anchor.
    Ring(f64),
    /// An outline around this rectangle.
    Outline(Rect),
}

/// What every chart model holds.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Base {
    /// Overall size in SVG user units.
    pub size: (f64, f64),
    /// Hover targets, in keyboard order.
    pub targets: Vec<Target>,
    /// Text summary for `<desc>` (screen readers, exported files).
    pub summary: String,
}

/// What the shell needs from a chart's model.
pub(crate) trait ChartModel: Clone + PartialEq + Send + Sync + 'static {
    /// Size, targets, summary.
    fn base(&self) -> &Base;
    /// Target under the pointer at `p`.
    fn hit(&self, p: (f64, f64)) -> Option<usize>;
    /// Keyboard Up/Down step (e.g. the number of columns of a heatmap).
    fn stride(&self) -> usize {
        1
    }
}

/// A fresh id for SVG definitions (clip paths, patterns, gradients): unique in the page, so
/// several charts can coexist.
pub(crate) fn unique_id(prefix: &str) -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(1);
    format!("{prefix}-{}", NEXT.fetch_add(1, Ordering::Relaxed))
}

/// Tracks the content width of `wrap` (px) with a ResizeObserver; starts at `fallback`. The
/// observer is disconnected when the owner is cleaned up.
fn use_width(wrap: NodeRef<Div>, fallback: f64) -> ReadSignal<f64> {
    let (width, set_width) = signal(fallback);
    type Observer = (web_sys::ResizeObserver, Closure<dyn FnMut(js_sys::Array)>);
    let holder: StoredValue<Option<Observer>, LocalStorage> = StoredValue::new_local(None);
    wrap.on_load(move |el: web_sys::HtmlDivElement| {
        let update = move |w: f64| {
            if w > 0.0 && (w - width.get_untracked()).abs() >= 1.0 {
                set_width.try_set(w.floor());
            }
        };
        update(f64::from(el.client_width()));
        let callback = Closure::<dyn FnMut(js_sys::Array)>::new(move |entries: js_sys::Array| {
            if let Ok(entry) = entries.get(0).dyn_into::<web_sys::ResizeObserverEntry>() {
                update(entry.content_rect().width());
            }
        });
        if let Ok(observer) = web_sys::ResizeObserver::new(callback.as_ref().unchecked_ref()) {
            observer.observe(&el);
            holder.set_value(Some((observer, callback)));
        }
    });
    on_cleanup(move || {
        holder.try_update_value(|h| {
            if let Some((observer, _callback)) = h.take() {
                observer.disconnect();
            }
        });
    });
    width
}

/// The pointer position of `ev` in the SVG's user units (the SVG may be scaled down to fit).
fn pointer_in_svg(ev: &web_sys::MouseEvent, svg: &web_sys::SvgElement, view_width: f64) -> Option<(f64, f64)> {
    let rect = svg.get_bounding_client_rect();
    if rect.width() <= 0.0 {
        return None;
    }
    let scale = view_width / rect.width();
    Some(((f64::from(ev.client_x()) - rect.left()) * scale, (f64::from(ev.client_y()) - rect.top()) * scale))
}

/// `label`, or `fallback` if it is blank (tooltip and description texts).
pub(crate) fn label_or<'a>(label: &'a str, fallback: &'a str) -> &'a str {
    if label.trim().is_empty() { fallback } else { label }
}

/// The props every chart component has besides its data.
pub(crate) struct Common {
    pub title: Signal<String>,
    /// Height in px; `None`: the chart's default.
    pub height: MaybeProp<f64>,
    /// Offer SVG/PNG download buttons under the chart (default true).
    pub export: MaybeProp<bool>,
    pub svg_ref: NodeRef<Svg>,
}

/// A chart's model behind one type: [`shell`] (its view, handlers and reactive closures) is then
/// compiled once, not once per kind of chart (issue 33: the page's module size; with the same
/// change to `runner.rs`'s time-slice loop, 4.1 KB gzipped).
#[derive(Clone)]
struct AnyModel(Arc<dyn DynModel>);

/// What [`shell`] reads from a [`ChartModel`], in a form that can stand behind a pointer (no
/// `Clone`; equality by downcast to the same kind of chart).
trait DynModel: Any + Send + Sync {
    fn base(&self) -> &Base;
    fn hit(&self, p: (f64, f64)) -> Option<usize>;
    fn stride(&self) -> usize;
    /// Whether `other` is a model of the same kind and equal to this one.
    fn same(&self, other: &dyn DynModel) -> bool;
}

impl<M: ChartModel> DynModel for M {
    fn base(&self) -> &Base {
        ChartModel::base(self)
    }

    fn hit(&self, p: (f64, f64)) -> Option<usize> {
        ChartModel::hit(self, p)
    }

    fn stride(&self) -> usize {
        ChartModel::stride(self)
    }

    fn same(&self, other: &dyn DynModel) -> bool {
        (other as &dyn Any).downcast_ref::<M>() == Some(self)
    }
}

impl std::ops::Deref for AnyModel {
    type Target = dyn DynModel;

    fn deref(&self) -> &(dyn DynModel + 'static) {
        &*self.0
    }
}

impl PartialEq for AnyModel {
    fn eq(&self, other: &AnyModel) -> bool {
        self.0.same(&*other.0)
    }
}

/// A chart's drawing of its (type-erased) model.
type Draw = Box<dyn Fn(&dyn DynModel) -> AnyView + Send + Sync>;

/// A complete chart: measures its container, builds the model with `build(width, height)`
/// whenever the width or a prop read inside `build` changes, and draws it in the shell.
pub(crate) fn chart<M: ChartModel>(
    common: Common,
    build: impl Fn(f64, Option<f64>) -> M + Send + Sync + 'static,
    draw: impl Fn(&M) -> AnyView + Send + Sync + 'static,
) -> impl IntoView {
    let Common { title, height, export, svg_ref } = common;
    let wrap = NodeRef::<Div>::new();
    let width = use_width(wrap, DEFAULT_WIDTH);
    let model = Memo::new(move |_| AnyModel(Arc::new(build(width.get().max(MIN_WIDTH), height.get()))));
    // The model is always an `M` (built just above); the empty view is never drawn.
    let draw: Draw = Box::new(move |m| match (m as &dyn Any).downcast_ref::<M>() {
        Some(m) => draw(m),
        None => ().into_any(),
    });
    shell(wrap, svg_ref, title, model, export.get_untracked().unwrap_or(true), draw)
}

/// The responsive `<svg>` root around a chart's drawing, with hover, keyboard and tooltip.
fn shell(
    wrap: NodeRef<Div>,
    svg_ref: NodeRef<Svg>,
    title: Signal<String>,
    model: Memo<AnyModel>,
    export: bool,
    draw: Draw,
) -> impl IntoView {
    let (hover, set_hover) = signal(None::<usize>);
    let title_id = unique_id("fc-title");
    let desc_id = unique_id("fc-desc");
    let labelled_by = title_id.clone();
    let described_by = desc_id.clone();
    let size = move || model.with(|m| m.base().size);

    let on_move = move |ev: web_sys::PointerEvent| {
        let Some(svg) = svg_ref.get_untracked() else { return };
        let width = model.with_untracked(|m| m.base().size.0);
        if let Some(p) = pointer_in_svg(&ev, &svg, width) {
            set_hover.set(model.with_untracked(|m| m.hit(p)));
        }
    };
    let on_key = move |ev: web_sys::KeyboardEvent| {
        let (len, stride) = model.with_untracked(|m| (m.base().targets.len(), m.stride()));
        if let Some(next) = keyboard_step(&ev.key(), hover.get_untracked(), len, stride) {
            ev.prevent_default();
            set_hover.set(next);
        }
    };
    let tooltip = move || {
        let index = hover.get()?;
        model.with(|m| {
            let target = m.base().targets.get(index)?;
            let (w, h) = m.base().size;
            Some(selection_view(target, Rect::new(0.0, 0.0, w, h)))
        })
    };
    let stylesheet = leptos::svg::style().child(live_stylesheet());

    view! {
        <div class="fc-wrap" node_ref=wrap style="width:100%;min-width:0">
            <svg
                xmlns="http://www.w3.org/2000/svg"
                class="fc"
                role="img"
                tabindex="0"
                aria-labelledby=labelled_by
                aria-describedby=described_by
                node_ref=svg_ref
                width=move || coord(size().0)
                height=move || coord(size().1)
                viewBox=move || format!("0 0 {} {}", coord(size().0), coord(size().1))
                style="display:block;max-width:100%;height:auto;touch-action:pan-y"
                on:pointermove=on_move
                on:pointerdown=on_move
                on:pointerleave=move |_| set_hover.set(None)
                on:keydown=on_key
                on:blur=move |_| set_hover.set(None)
            >
                <title id=title_id>{move || title.get()}</title>
                <desc id=desc_id>{move || model.with(|m| m.base().summary.clone())}</desc>
                {stylesheet}
                <rect class="fc-bg" x="0" y="0" width=move || coord(size().0) height=move || coord(size().1) />
                {move || model.with(|m| draw(&*m.0))}
                <g class="fc-overlay" style="pointer-events:none">{tooltip}</g>
                <rect
                    class="fc-frame"
                    x="1"
                    y="1"
                    width=move || coord(size().0 - 2.0)
                    height=move || coord(size().1 - 2.0)
                    rx="4"
                />
            </svg>
            {export.then(|| view! { <ExportButtons svg_ref=svg_ref name=title /> })}
        </div>
    }
}

/// The mark on the selected target and its tooltip box.
fn selection_view(target: &Target, bounds: Rect) -> impl IntoView + use<> {
    let t = Typography::default();
    let pad = 7.0;
    let (w, h) = tooltip_size(&target.lines, t.label_px, pad);
    let offset = match &target.mark {
        Mark::Ring(r) => r + 8.0,
        Mark::Outline(_) => 10.0,
    };
    let (x, y) = place_tooltip(target.anchor, (w, h), bounds, offset);
    let mark = match &target.mark {
        Mark::Ring(r) => view! {
            <circle class="fc-hl" cx=coord(target.anchor.0) cy=coord(target.anchor.1) r=coord(*r) />
        }
        .into_any(),
        Mark::Outline(rect) => view! {
            <rect
                class="fc-hl"
                x=coord(rect.x - 1.0)
                y=coord(rect.y - 1.0)
                width=coord(rect.width + 2.0)
                height=coord(rect.height + 2.0)
            />
        }
        .into_any(),
    };
    let lines = target.lines.clone();
    let line_h = t.label_px * 1.35;
    view! {
        {mark}
        <g class="fc-tip" transform=format!("translate({},{})", coord(x), coord(y))>
            <rect width=coord(w) height=coord(h) rx="4" />
            <text>
                {lines
                    .into_iter()
                    .enumerate()
                    .map(|(i, line)| {
                        view! {
                            <tspan
                                class=if i == 0 { "fc-tip-head" } else { "" }
                                x=coord(pad)
                                y=coord(pad + t.label_px * 0.85 + i as f64 * line_h)
                            >
                                {line}
                            </tspan>
                        }
                    })
                    .collect_view()}
            </text>
        </g>
    }
}

/// The title lines, left-aligned.
pub(crate) fn title_view(c: &Cartesian) -> impl IntoView + use<> {
    let t = Typography::default();
    let y0 = c.frame.title_y;
    let lines = c.title_lines.clone();
    view! {
        <text class="fc-title">
            {lines
                .into_iter()
                .enumerate()
                .map(|(i, line)| {
                    view! {
                        <tspan x=coord(t.pad) y=coord(y0 + i as f64 * t.title_px * 1.25)>
                            {line}
                        </tspan>
                    }
                })
                .collect_view()}
        </text>
    }
}

/// Grid lines behind the data: vertical for x ticks, horizontal for y ticks.
pub(crate) fn grid_view(c: &Cartesian) -> impl IntoView + use<> {
    let plot = c.plot();
    let line = |class: &'static str, (x1, y1): (f64, f64), (x2, y2): (f64, f64)| {
        view! { <line class=class x1=coord(x1) y1=coord(y1) x2=coord(x2) y2=coord(y2) /> }
    };
    let class = |g: GridLine| match g {
        GridLine::Major => Some("fc-grid"),
        GridLine::Minor => Some("fc-grid-minor"),
        GridLine::None => None,
    };
    let xs: Vec<_> =
        c.x_ticks.iter().filter_map(|t| Some(line(class(t.grid)?, (t.pos, plot.y), (t.pos, plot.bottom())))).collect();
    let ys: Vec<_> =
        c.y_ticks.iter().filter_map(|t| Some(line(class(t.grid)?, (plot.x, t.pos), (plot.right(), t.pos)))).collect();
    view! { <g class="fc-grids">{xs}{ys}</g> }
}

/// Axis lines, tick marks, tick labels and the axis titles.
pub(crate) fn axes_view(c: &Cartesian, x_label: String, y_label: String) -> impl IntoView + use<> {
    let t = Typography::default();
    let plot = c.plot();
    let x_ticks = c.x_ticks.clone();
    let y_ticks = c.y_ticks.clone();
    let tick_y = c.frame.x_tick_y;
    let x_marks = x_ticks
        .iter()
        .map(|tick: &DrawTick| {
            let len = if tick.label.is_some() || tick.grid == GridLine::None { TICK_LEN } else { TICK_LEN * 0.6 };
            view! {
                <line class="fc-axis" x1=coord(tick.pos) y1=coord(plot.bottom()) x2=coord(tick.pos) y2=coord(plot.bottom() + len) />
            }
        })
        .collect_view();
    let x_texts = x_ticks
        .into_iter()
        .filter_map(|tick| {
            let label = tick.label?;
            Some(view! {
                <text class="fc-tick" x=coord(tick.pos) y=coord(tick_y) text-anchor="middle">
                    {label}
                </text>
            })
        })
        .collect_view();
    let y_marks = y_ticks
        .iter()
        .map(|tick| {
            let len = if tick.label.is_some() || tick.grid == GridLine::None { TICK_LEN } else { TICK_LEN * 0.6 };
            view! { <line class="fc-axis" x1=coord(plot.x - len) y1=coord(tick.pos) x2=coord(plot.x) y2=coord(tick.pos) /> }
        })
        .collect_view();
    // A category label may take two lines (a bar's name at a phone's width): one <text> each, the
    // lines 1.15 em apart where neighbouring labels are at least 1.3 em apart (`thin`), which is
    // how a reader of the SVG tells them apart.
    let x_end = coord(plot.x - TICK_LEN - 3.0);
    let y_texts = y_ticks
        .iter()
        .flat_map(|tick| tick.lines(t.tick_px))
        .map(|(line, y)| {
            view! {
                <text class="fc-tick" x=x_end.clone() y=coord(y) text-anchor="end">
                    {line}
                </text>
            }
        })
        .collect_view();
    let x_title = (!x_label.trim().is_empty()).then(|| {
        view! {
            <text class="fc-label" x=coord(plot.x + plot.width / 2.0) y=coord(c.frame.x_label_y) text-anchor="middle">
                {x_label}
            </text>
        }
    });
    let y_center = plot.y + plot.height / 2.0;
    let y_title = (!y_label.trim().is_empty()).then(|| {
        let x = c.frame.y_label_x;
        view! {
            <text
                class="fc-label"
                x=coord(x)
                y=coord(y_center)
                text-anchor="middle"
                transform=format!("rotate(-90 {} {})", coord(x), coord(y_center))
                dominant-baseline="central"
            >
                {y_label}
            </text>
        }
    });
    view! {
        <g class="fc-axes">
            <line class="fc-axis" x1=coord(plot.x) y1=coord(plot.bottom()) x2=coord(plot.right()) y2=coord(plot.bottom()) />
            <line class="fc-axis" x1=coord(plot.x) y1=coord(plot.y) x2=coord(plot.x) y2=coord(plot.bottom()) />
            {x_marks}
            {x_texts}
            {y_marks}
            {y_texts}
            {x_title}
            {y_title}
        </g>
    }
}

/// How a legend entry is drawn.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Swatch {
    /// A line with the series' marker.
    Line(usize),
    /// A filled box in the series' colour.
    Box(usize),
    /// The series' marker alone.
    Marker(usize),
    /// A box filled with the pattern of this id (infeasible cells).
    Pattern(String),
    /// A dashed outline (missing cells).
    Dashed,
    /// The dashed reference line.
    Reference,
    /// The translucent reference band.
    Band,
    /// The outline of a highlighted cell (the best one).
    Highlight,
    /// A bar's band (a whisker).
    Range,
    /// The outline of a bar that may not fit (`Near`) or does not (`Over`) under a limit.
    Flag(fmperf_chart::limit::Standing),
}

/// The classes of the outline of a bar that may not fit under a limit (dashed) or does not (solid).
pub(crate) fn flag_class(s: fmperf_chart::limit::Standing) -> &'static str {
    if s == fmperf_chart::limit::Standing::Over { "fc-flag fc-flag-over" } else { "fc-flag fc-flag-near" }
}

/// The legend, flowed under the title (layout from `fmperf_chart::layout::legend_layout`).
pub(crate) fn legend_view(c: &Cartesian, entries: Vec<(String, Swatch)>) -> impl IntoView + use<> {
    let t = Typography::default();
    let dy = c.frame.legend_y;
    let items = c.legend.items.clone();
    entries
        .into_iter()
        .zip(items)
        .map(|((label, swatch), item)| {
            let (x, y) = (item.x, item.y + dy);
            let icon = match swatch {
                Swatch::Line(i) => {
                    let st = fmperf_chart::marker::series_style(i);
                    view! {
                        <g class=format!("fc-s{}", st.color)>
                            <line class="fc-line" x1=coord(x) y1=coord(y) x2=coord(x + 16.0) y2=coord(y) stroke-dasharray=st.dash />
                            <path class="fc-mark" d=st.marker.path(x + 8.0, y, 3.5) />
                        </g>
                    }
                    .into_any()
                }
                Swatch::Box(i) => view! {
                    <rect class=format!("fc-swatch fc-s{}", i % 8) x=coord(x) y=coord(y - 6.0) width="16" height="12" rx="2" />
                }
                .into_any(),
                Swatch::Marker(i) => view! {
                    <path class=format!("fc-mark fc-s{}", i % 8) d=MarkerShape::for_series(i).path(x + 8.0, y, 4.5) />
                }
                .into_any(),
                Swatch::Pattern(id) => view! {
                    <rect class="fc-infeasible" x=coord(x) y=coord(y - 6.0) width="16" height="12" fill=format!("url(#{id})") />
                }
                .into_any(),
                Swatch::Dashed => view! {
                    <rect class="fc-missing" x=coord(x + 0.5) y=coord(y - 5.5) width="15" height="11" />
                }
                .into_any(),
                Swatch::Reference => view! {
                    <line class="fc-ref" x1=coord(x) y1=coord(y) x2=coord(x + 16.0) y2=coord(y) />
                }
                .into_any(),
                Swatch::Band => view! { <rect class="fc-band" x=coord(x) y=coord(y - 6.0) width="16" height="12" /> }
                    .into_any(),
                Swatch::Highlight => view! { <rect class="fc-hl" x=coord(x + 1.0) y=coord(y - 5.0) width="14" height="10" /> }
                    .into_any(),
                Swatch::Range | Swatch::Flag(_) => {
                    let (class, d) = match swatch {
                        Swatch::Flag(s) => (
                            flag_class(s),
                            fmperf_chart::limit::outline_path(Rect::new(x + 2.0, y - 4.0, 12.0, 8.0), 1.0),
                        ),
                        _ => ("fc-range", fmperf_chart::limit::whisker(x + 1.0, x + 15.0, y - 8.0, 16.0, true).path()),
                    };
                    view! { <path class=class d=d /> }.into_any()
                }
            };
            view! {
                <g class="fc-legend-item">
                    {icon}
                    <text class="fc-legend" x=coord(x + SWATCH) y=coord(y + t.label_px * 0.35)>
                        {label}
                    </text>
                </g>
            }
        })
        .collect_view()
}

/// A message centred in the plot when there is nothing to draw.
pub(crate) fn empty_view(c: &Cartesian, message: &str) -> impl IntoView + use<> {
    let plot = c.plot();
    let message = message.to_string();
    view! {
        <text class="fc-empty" x=coord(plot.x + plot.width / 2.0) y=coord(plot.y + plot.height / 2.0) text-anchor="middle">
            {message}
        </text>
    }
}

/// A clip path for the plot area, so lines and bands outside the domain are cut at its edge.
pub(crate) fn plot_clip(id: &str, plot: Rect) -> impl IntoView + use<> {
    let id = id.to_string();
    view! {
        <defs>
            <clipPath id=id>
                <rect x=coord(plot.x) y=coord(plot.y) width=coord(plot.width) height=coord(plot.height) />
            </clipPath>
        </defs>
    }
}
