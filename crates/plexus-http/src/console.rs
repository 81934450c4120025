//! The web console's files, embedded in the binary at build time (`assets/`).
//!
//! WHAT
//! ====
//! `/` answers `index.html`; `/console/{file}` the script, the style sheet and the vendored
//! cytoscape.js (MIT; its licence is `assets/cytoscape.LICENSE`, served beside it). Nothing is
//! fetched from elsewhere at run time, so the console works offline and on air-gapped hosts.
//!
//! WHY
//! ===
//! Plain files, no build step: what is in `assets/` is exactly what the browser runs.
//!
//! INVARIANTS
//! ==========
//! - The files are public (the console must load to show its login form); every data
//!   request it then makes carries the credentials the user typed.
//! - Responses forbid framing and inline script from elsewhere (`Content-Security-Policy`),
//!   so a value that slipped through as markup still could not run.

use crate::guard::{NOT_FOUND, error};
use axum::extract::Path;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

#[derive(rust_embed::RustEmbed)]
#[folder = "assets/"]
struct Assets;

/// The console's content security policy: its own files only, no inline script.
const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; \
                   connect-src 'self'; frame-ancestors 'none'";

fn serve(name: &str) -> Response {
    let Some(file) = Assets::get(name) else {
        return error(
            StatusCode::NOT_FOUND,
            NOT_FOUND,
            format!("no console file '{name}'"),
        );
    };
    let mime = match name.rsplit_once('.').map(|(_, ext)| ext) {
        Some("html") => "text/html; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("png") => "image/png",
        _ => "text/plain; charset=utf-8",
    };
    (
        [
            (header::CONTENT_TYPE, mime),
            (header::CONTENT_SECURITY_POLICY, CSP),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        file.data.into_owned(),
    )
        .into_response()
}

pub async fn index() -> Response {
    serve("index.html")
}

pub async fn asset(Path(file): Path<String>) -> Response {
    serve(&file)
}
