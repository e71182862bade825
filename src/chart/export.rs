//! Export a chart as a standalone `.svg` file or as a `.png` image.
//!
//! The exported SVG is a copy of the chart's `<svg>` element (found through a `NodeRef`, never by
//! id: the app may live in a shadow root) with the hover overlay removed and the embedded
//! stylesheet replaced by one with the colours the page currently shows (read from the chart's
//! computed `--fc-i-*` custom properties), so the file renders identically anywhere, in light or
//! dark. The PNG is that SVG drawn on a canvas over the chart background at 2× resolution.

use std::cell::RefCell;
use std::rc::Rc;

use fmperf_chart::format::slug;
use fmperf_chart::palette::{DARK, LIGHT};
use fmperf_chart::style::{resolved_stylesheet, theme_from_css};
use fmperf_chart::{Rgb, Theme};
use leptos::prelude::*;
use leptos::svg::Svg;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{CanvasRenderingContext2d, Element, HtmlCanvasElement, HtmlImageElement, SvgElement, Url};

use crate::download::{DownloadError, download_blob, download_text, text_blob};

/// Scale of PNG exports relative to the chart's size in CSS px.
const PNG_SCALE: f64 = 2.0;

/// The theme the chart is drawn with right now, from its computed custom properties (falls back
/// to the light or dark default, whichever the page prefers, for anything unreadable).
fn current_theme(svg: &SvgElement) -> Theme {
    let window = window();
    let prefers_dark = window.match_media("(prefers-color-scheme: dark)").ok().flatten().is_some_and(|m| m.matches());
    let fallback = if prefers_dark { DARK } else { LIGHT };
    let Ok(Some(style)) = window.get_computed_style(svg) else { return fallback };
    theme_from_css(
        |name| style.get_property_value(&format!("--fc-i-{name}")).ok().filter(|v| !v.trim().is_empty()),
        fallback,
    )
}

/// The chart's size in SVG user units (from its `width`/`height` attributes).
fn svg_size(svg: &SvgElement) -> (f64, f64) {
    let read = |name: &str| svg.get_attribute(name).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (read("width"), read("height"))
}

/// Standalone SVG markup of the chart in `svg`, with concrete colours (see the module doc).
pub fn svg_markup(svg: &SvgElement) -> Result<(String, Theme), DownloadError> {
    let theme = current_theme(svg);
    let copy: Element = svg.clone_node_with_deep(true)?.dyn_into().map_err(|_| DownloadError("clone failed".into()))?;
    // Drop hover marks and tooltips, the focus frame, and the page-only attributes.
    for selector in [".fc-overlay", ".fc-frame"] {
        if let Some(el) = copy.query_selector(selector)? {
            el.remove();
        }
    }
    for attr in ["tabindex", "style", "aria-labelledby", "aria-describedby"] {
        copy.remove_attribute(attr)?;
    }
    if let Some(style) = copy.query_selector("style")? {
        style.set_text_content(Some(&resolved_stylesheet(&theme)));
    }
    let markup = fmperf_chart::format::strip_comments(&copy.outer_html());
    let markup = if markup.contains("xmlns=") {
        markup
    } else {
        markup.replacen("<svg", "<svg xmlns=\"http://www.w3.org/2000/svg\"", 1)
    };
    Ok((format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n{markup}\n"), theme))
}

/// Downloads the chart as `<name>.svg`.
pub fn export_svg(svg: &SvgElement, name: &str) -> Result<(), DownloadError> {
    let (markup, _) = svg_markup(svg)?;
    download_text(&format!("{}.svg", slug(name)), "image/svg+xml", &markup)
}

/// Holds the image's onload closure until it has run.
type OnloadSlot = Rc<RefCell<Option<Closure<dyn FnMut()>>>>;

/// Downloads the chart as `<name>.png` (2× resolution, chart background colour behind it).
/// Asynchronous: the image is decoded and drawn when the browser has loaded it.
pub fn export_png(svg: &SvgElement, name: &str) -> Result<(), DownloadError> {
    let (markup, theme) = svg_markup(svg)?;
    let (w, h) = svg_size(svg);
    if w <= 0.0 || h <= 0.0 {
        return Err(DownloadError("the chart has no size yet".into()));
    }
    let blob = text_blob("image/svg+xml", &markup)?;
    let url = Url::create_object_url_with_blob(&blob)?;
    let image = HtmlImageElement::new()?;
    let filename = format!("{}.png", slug(name));
    let background = theme.background;
    // The onload closure must outlive this call; it frees itself when it runs.
    let slot: OnloadSlot = Rc::new(RefCell::new(None));
    let slot_in = slot.clone();
    let image_in = image.clone();
    let url_in = url.clone();
    let onload = Closure::<dyn FnMut()>::new(move || {
        let result = draw_and_download(&image_in, (w, h), background, &filename);
        if let Err(e) = result {
            leptos::logging::error!("{e}");
        }
        let _ = Url::revoke_object_url(&url_in);
        slot_in.borrow_mut().take();
    });
    image.set_onload(Some(onload.as_ref().unchecked_ref()));
    *slot.borrow_mut() = Some(onload);
    image.set_src(&url);
    Ok(())
}

/// Draws the loaded `image` on a canvas over `background` and downloads it as PNG.
fn draw_and_download(
    image: &HtmlImageElement,
    (w, h): (f64, f64),
    background: Rgb,
    filename: &str,
) -> Result<(), DownloadError> {
    let canvas: HtmlCanvasElement =
        document().create_element("canvas")?.dyn_into().map_err(|_| DownloadError("no canvas".into()))?;
    canvas.set_width((w * PNG_SCALE).round() as u32);
    canvas.set_height((h * PNG_SCALE).round() as u32);
    let context: CanvasRenderingContext2d = canvas
        .get_context("2d")?
        .ok_or_else(|| DownloadError("no 2d context".into()))?
        .dyn_into()
        .map_err(|_| DownloadError("no 2d context".into()))?;
    context.set_fill_style_str(&background.to_hex());
    context.fill_rect(0.0, 0.0, w * PNG_SCALE, h * PNG_SCALE);
    context.draw_image_with_html_image_element_and_dw_and_dh(image, 0.0, 0.0, w * PNG_SCALE, h * PNG_SCALE)?;
    let filename = filename.to_string();
    let callback = Closure::once_into_js(move |blob: JsValue| match blob.dyn_into::<web_sys::Blob>() {
        Ok(blob) => {
            if let Err(e) = download_blob(&filename, &blob) {
                leptos::logging::error!("{e}");
            }
        }
        Err(_) => leptos::logging::error!("PNG export: the canvas produced no image"),
    });
    canvas.to_blob(callback.unchecked_ref())?;
    Ok(())
}

/// "SVG" and "PNG" download buttons for the chart in `svg_ref`; files are named after `name`.
#[component]
pub fn ExportButtons(
    /// The chart's `<svg>`.
    svg_ref: NodeRef<Svg>,
    /// File name stem (made safe with `fmperf_chart::format::slug`), usually the chart title.
    #[prop(into)]
    name: Signal<String>,
) -> impl IntoView {
    let (error, set_error) = signal(None::<String>);
    let run = move |png: bool| {
        let Some(svg) = svg_ref.get_untracked() else { return };
        let name = name.get_untracked();
        let result = if png { export_png(&svg, &name) } else { export_svg(&svg, &name) };
        set_error.set(result.err().map(|e| e.to_string()));
    };
    view! {
        <div class="fc-export">
            <button type="button" title="Download this chart as an SVG file" on:click=move |_| run(false)>
                "SVG"
            </button>
            <button type="button" title="Download this chart as a PNG image" on:click=move |_| run(true)>
                "PNG"
            </button>
            {move || error.get().map(|e| view! { <span class="fc-export-error" role="alert">{e}</span> })}
        </div>
    }
}
