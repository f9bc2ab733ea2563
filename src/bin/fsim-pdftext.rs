//! fsim-pdftext: the text of a PDF's pages, the pure-Rust fallback for
//! poppler's pdftotext. Logic: `fsim::content::pdftext`.

use clap::Parser;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Print the text of each page of a PDF in order, a form feed after each
/// page (what `pdftotext FILE -` prints, without its layout).
///
/// fsim's content views run it where pdftotext is not installed (or
/// FSIM_PDF=fsim-pdftext): always as a process of its own, with an address
/// space, CPU and wall-clock limit, since a PDF parser faces the most
/// hostile of formats. Errors go to stderr, one line, and exit 1; the text
/// is then incomplete and must not be used.
#[derive(Parser, Debug)]
#[command(name = "fsim-pdftext", version)]
struct Args {
    /// The PDF file.
    #[arg(value_name = "FILE.pdf")]
    file: PathBuf,
}

fn main() -> ExitCode {
    let args = Args::parse();
    // A panic in the parser (it `unwrap`s on malformed input) is one line
    // that says so, which fsim's note quotes, not a backtrace.
    let file = args.file.display().to_string();
    std::panic::set_hook(Box::new(move |info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        let at = info
            .location()
            .map(|l| {
                format!(
                    " at {}:{}",
                    l.file().rsplit('/').next().unwrap_or(""),
                    l.line()
                )
            })
            .unwrap_or_default();
        fsim::cli::stderr_line(format_args!(
            "fsim-pdftext: error: {file}: the PDF parser panicked{at}: {msg}"
        ));
    }));
    let data = match std::fs::read(&args.file) {
        Ok(d) => d,
        Err(e) => {
            fsim::cli::stderr_line(format_args!(
                "fsim-pdftext: error: {}: {e}",
                args.file.display()
            ));
            return ExitCode::FAILURE;
        }
    };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    match fsim::content::pdftext::write_pages(&data, &mut out)
        .and_then(|()| out.flush().map_err(|e| format!("writing the text: {e}")))
    {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            fsim::cli::stderr_line(format_args!(
                "fsim-pdftext: error: {}: {e}",
                args.file.display()
            ));
            ExitCode::FAILURE
        }
    }
}
