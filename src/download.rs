//! Client-side downloads: hand a string or a `Blob` to the browser as a file, through an object
//! URL and a temporary `<a download>` (works from `http(s)://` and `file://`, inside a shadow
//! root too: the anchor is never attached to the page).

#![allow(dead_code)]

use std::time::Duration;

use leptos::prelude::{document, set_timeout};
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{Blob, BlobPropertyBag, HtmlAnchorElement, Url};

/// Why a download could not start (the browser refused an API call).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DownloadError(pub String);

impl std::fmt::Display for DownloadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "download failed: {}", self.0)
    }
}

impl From<JsValue> for DownloadError {
    fn from(value: JsValue) -> Self {
        DownloadError(value.as_string().unwrap_or_else(|| format!("{value:?}")))
    }
}

/// Offers `text` as a file named `filename` with MIME type `mime` (e.g. `text/csv`,
/// `application/json`; `;charset=utf-8` is added for `text/*` types).
pub fn download_text(filename: &str, mime: &str, text: &str) -> Result<(), DownloadError> {
    let blob = text_blob(mime, text)?;
    download_blob(filename, &blob)
}

/// A `Blob` holding `text` (UTF-8) with MIME type `mime`.
pub fn text_blob(mime: &str, text: &str) -> Result<Blob, DownloadError> {
    let options = BlobPropertyBag::new();
    let mime = if mime.starts_with("text/") && !mime.contains("charset") {
        format!("{mime};charset=utf-8")
    } else {
        mime.to_string()
    };
    options.set_type(&mime);
    let parts = js_sys::Array::of1(&JsValue::from_str(text));
    Ok(Blob::new_with_str_sequence_and_options(&parts, &options)?)
}

/// Offers `blob` as a file named `filename`. The object URL is revoked a few seconds later.
pub fn download_blob(filename: &str, blob: &Blob) -> Result<(), DownloadError> {
    let url = Url::create_object_url_with_blob(blob)?;
    let anchor: HtmlAnchorElement = document()
        .create_element("a")?
        .dyn_into()
        .map_err(|_| DownloadError("could not create an <a> element".to_string()))?;
    anchor.set_href(&url);
    anchor.set_download(filename);
    anchor.set_rel("noopener");
    anchor.click();
    set_timeout(
        move || {
            let _ = Url::revoke_object_url(&url);
        },
        Duration::from_secs(5),
    );
    Ok(())
}
