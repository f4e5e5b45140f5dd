//! `counterfoil export --format documents`: the e-invoices of a period's
//! invoices and credit notes, for the accountant — each one's UBL, CII and
//! Factur-X PDF, written into a new folder or a zip file, with an
//! `index.csv` (number, kind, issue date, currency, total with VAT, files).
//!
//! Invariants: every document is made by the core from the input the
//! plugin froze when the document was first made
//! (`{prefix}counterfoil_documents`), so the files are the bytes the site
//! gives for the same invoice, whoever exports them and whenever; read-only
//! on the database; an invoice or credit note of the period that has no
//! frozen input (no valid document could be made on the site yet) is a
//! finding, listed, and the exit is 1 — never a silent gap; a refused
//! input is a finding too; the folder must be new or empty and a zip file
//! new, so nothing is overwritten; the zip's entries carry their invoice's
//! issue date, so the same period gives the same archive; documents are
//! made on every core, written in the order of their posts; progress on
//! stderr; two invoices whose numbers read the same (two issuers' series)
//! never share a file name: the later one's carries its post id, and then
//! a counter, tried until every name of the document is free.
//!
//! On disk nothing is ever overwritten or followed: a new folder is made
//! with mode 0700, the output path must not be a symbolic link, and every
//! file (the zip, each document, `index.csv`) is opened with create-new
//! semantics (`O_CREAT | O_EXCL`: an existing file or link of that name is
//! never opened) and mode 0600 — invoices name buyers and their addresses,
//! so the export is readable by its owner alone until they share it. A
//! document's name found taken on disk moves it to the next free name.

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use counterfoil_core::einvoice::{cii, json, pdf, ubl, Document};
use counterfoil_core::export::ExportFilter;
use counterfoil_core::TablePrefix;
use mysql_async::Value;

use crate::cli::{ExportArgs, Global};
use crate::db::{Db, Tables};
use crate::Outcome;

/// Documents read per query.
const CHUNK: u64 = 2_000;

/// What the PDF says made it.
const PRODUCER: &str = concat!("Counterfoil ", env!("CARGO_PKG_VERSION"));

/// The files a document gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FileFormat {
    Ubl,
    Cii,
    Pdf,
}

impl FileFormat {
    fn parse_list(list: &str) -> Result<Vec<FileFormat>> {
        let mut out = Vec::new();
        for f in list.split(',').map(str::trim).filter(|f| !f.is_empty()) {
            let f = match f {
                "ubl" => FileFormat::Ubl,
                "cii" => FileFormat::Cii,
                "pdf" => FileFormat::Pdf,
                other => {
                    bail!("invalid argument `document-formats`: `{other}` is not ubl, cii or pdf")
                }
            };
            if !out.contains(&f) {
                out.push(f);
            }
        }
        if out.is_empty() {
            bail!("invalid argument `document-formats`: name ubl, cii or pdf");
        }
        Ok(out)
    }

    fn ending(self) -> &'static str {
        match self {
            FileFormat::Ubl => ".ubl.xml",
            FileFormat::Cii => ".cii.xml",
            FileFormat::Pdf => ".pdf",
        }
    }
}

/// Where the files go.
enum Sink {
    Folder(PathBuf),
    Zip(Box<zip::ZipWriter<std::io::BufWriter<std::fs::File>>>),
}

/// A new file, never an existing one or a link (`O_CREAT | O_EXCL`), mode
/// 0600.
fn create_new(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)
}

/// A new folder (its parents as usual), mode 0700; fails if it exists.
fn create_folder(path: &Path) -> std::io::Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(path)
}

/// The names a document's files may take, in order: its number's, then
/// with its post id, then with a counter — endless, so a free one is found.
fn stems(number: &str, post_id: u64) -> impl Iterator<Item = String> {
    let stem = file_stem(number);
    std::iter::once(stem.clone())
        .chain(std::iter::once(format!("{stem}-post{post_id}")))
        .chain((2u64..).map(move |n| format!("{stem}-post{post_id}-{n}")))
}

impl Sink {
    fn open(output: &str) -> Result<Sink> {
        let path = Path::new(output);
        if output.ends_with(".zip") {
            let file = create_new(path).with_context(|| {
                format!("create {output} (a new file: nothing is overwritten, no link followed)")
            })?;
            return Ok(Sink::Zip(Box::new(zip::ZipWriter::new(
                std::io::BufWriter::new(file),
            ))));
        }
        match std::fs::symlink_metadata(path) {
            Ok(meta) if meta.file_type().is_symlink() => {
                bail!("{output} is a symbolic link: name a new folder (the export follows no link)")
            }
            Ok(meta) if !meta.is_dir() => {
                bail!("{output} is not a folder: name a new folder or a new .zip file")
            }
            // An empty folder the user made: used as it is (its mode theirs).
            Ok(_) => {
                if std::fs::read_dir(path)?.next().is_some() {
                    bail!(
                        "{output} is not empty: export into a new or empty folder (nothing is overwritten)"
                    );
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                create_folder(path).with_context(|| format!("create {output}"))?;
            }
            Err(e) => return Err(e).with_context(|| format!("read {output}")),
        }
        Ok(Sink::Folder(path.to_owned()))
    }

    /// Writes one document's files (`(ending, bytes)`) under the first of
    /// `stems` whose every name is free — not used in this export, and in
    /// a folder not on disk (a file or link found there is left as it is,
    /// and the next name tried); its names.
    fn put(
        &mut self,
        used: &mut HashSet<String>,
        stems: impl Iterator<Item = String>,
        date: &str,
        files: &[(&str, Vec<u8>)],
    ) -> Result<Vec<String>> {
        for stem in stems {
            let names: Vec<String> = files
                .iter()
                .map(|(ending, _)| format!("{stem}{ending}"))
                .collect();
            if names.iter().any(|n| used.contains(n)) {
                continue;
            }
            if let Sink::Folder(dir) = self {
                let mut written: Vec<PathBuf> = Vec::new();
                let mut taken = false;
                for (name, (_, bytes)) in names.iter().zip(files) {
                    let path = dir.join(name);
                    match create_new(&path) {
                        Ok(mut file) => {
                            written.push(path.clone());
                            file.write_all(bytes)
                                .with_context(|| format!("write {}", path.display()))?;
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                            taken = true;
                            break;
                        }
                        Err(e) => {
                            return Err(e).with_context(|| format!("create {}", path.display()))
                        }
                    }
                }
                if taken {
                    // Removed: only the files this attempt made.
                    for w in &written {
                        std::fs::remove_file(w)
                            .with_context(|| format!("remove {}", w.display()))?;
                    }
                    used.extend(names);
                    continue;
                }
            } else {
                for (name, (_, bytes)) in names.iter().zip(files) {
                    self.write(name, date, bytes)?;
                }
            }
            used.extend(names.iter().cloned());
            return Ok(names);
        }
        unreachable!("the names a document may take are endless")
    }

    fn write(&mut self, name: &str, date: &str, bytes: &[u8]) -> Result<()> {
        match self {
            Sink::Folder(dir) => {
                let path = dir.join(name);
                create_new(&path)
                    .and_then(|mut f| f.write_all(bytes))
                    .with_context(|| {
                        format!(
                            "create {} (a new file: nothing is overwritten)",
                            path.display()
                        )
                    })
            }
            Sink::Zip(zip) => {
                let compressed = !name.ends_with(".pdf");
                let options = zip::write::SimpleFileOptions::default()
                    .compression_method(if compressed {
                        zip::CompressionMethod::Deflated
                    } else {
                        zip::CompressionMethod::Stored
                    })
                    .last_modified_time(zip_date(date));
                zip.start_file(name, options)?;
                zip.write_all(bytes)?;
                Ok(())
            }
        }
    }

    fn finish(self) -> Result<()> {
        if let Sink::Zip(zip) = self {
            zip.finish()?.flush()?;
        }
        Ok(())
    }
}

/// A `YYYY-MM-DD` day as a zip entry's time (midnight; the epoch of zip
/// files when it is not a day).
fn zip_date(date: &str) -> zip::DateTime {
    let mut p = date.splitn(3, '-').map(|v| v.parse::<u16>().unwrap_or(0));
    let (y, m, d) = (
        p.next().unwrap_or(1980),
        p.next().unwrap_or(1),
        p.next().unwrap_or(1),
    );
    zip::DateTime::from_date_and_time(y, m as u8, d as u8, 0, 0, 0).unwrap_or_default()
}

/// A number as a file name: letters, digits, `-`, `_` and `.` kept, the
/// rest `_`.
fn file_stem(number: &str) -> String {
    number
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// One frozen document input of the period.
struct Frozen {
    post_id: u64,
    number: String,
    kind: String,
    issue_date: String,
    input: String,
}

/// A document made: its files (name ending, bytes), or why not.
type Made = Result<(Document, Vec<(&'static str, Vec<u8>)>), String>;

fn make(f: &Frozen, formats: &[FileFormat]) -> Made {
    let input = json::input_from_str(&f.input).map_err(|e| e.to_string())?;
    let d = Document::build(input).map_err(|e| e.to_string())?;
    let mut files = Vec::with_capacity(formats.len());
    for format in formats {
        let bytes = match format {
            FileFormat::Ubl => ubl::to_ubl(&d),
            FileFormat::Cii => cii::to_cii(&d),
            FileFormat::Pdf => pdf::to_facturx(&d, PRODUCER).map_err(|e| e.to_string())?,
        };
        files.push((format.ending(), bytes));
    }
    Ok((d, files))
}

/// Makes a chunk's documents on every core, in order.
fn make_all(chunk: &[Frozen], formats: &[FileFormat]) -> Vec<Made> {
    let workers = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(chunk.len().max(1));
    let per = chunk.len().div_ceil(workers).max(1);
    std::thread::scope(|s| {
        let handles: Vec<_> = chunk
            .chunks(per)
            .map(|part| s.spawn(move || part.iter().map(|f| make(f, formats)).collect::<Vec<_>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("a document worker panicked"))
            .collect()
    })
}

/// The period's first and last day.
fn period(args: &ExportArgs) -> Result<(String, String)> {
    if args.scope.is_some() || args.status.is_some() {
        bail!("invalid argument: --format documents takes --year, --from and --to (the issue dates), not --scope or --status");
    }
    // The registry export's own check of a year and days.
    ExportFilter {
        scope: None,
        year: args.year,
        from: args.from.clone(),
        to: args.to.clone(),
        status: None,
    }
    .validate()?;
    let (mut from, mut to) = ("1000-01-01".to_owned(), "9999-12-31".to_owned());
    if let Some(y) = args.year {
        from = format!("{y:04}-01-01");
        to = format!("{y:04}-12-31");
    }
    if let Some(f) = &args.from {
        from = f.clone();
    }
    if let Some(t) = &args.to {
        to = t.clone();
    }
    Ok((from, to))
}

pub async fn run(global: &Global, args: &ExportArgs) -> Result<Outcome> {
    let formats = FileFormat::parse_list(&args.document_formats)?;
    let (from, to) = period(args)?;
    let Some(output) = args.output.as_deref() else {
        bail!("invalid argument: --format documents writes files: name a new folder or a .zip with --output");
    };
    let url = crate::database_url(global)?;
    if counterfoil_core::Engine::of_url(&url) == counterfoil_core::Engine::Postgres {
        bail!("--format documents reads a WordPress site's tables (MySQL/MariaDB): its invoices live there");
    }
    let tables = Tables::new(&TablePrefix::new(&global.table_prefix)?);
    let mut db = Db::connect(&url, Duration::from_millis(global.timeout_ms)).await?;
    if !db.table_exists(&tables.documents).await? {
        bail!(
            "no e-invoices: table `{}` does not exist (the plugin 0.4 or later makes it)",
            tables.documents
        );
    }
    if !global.json {
        eprintln!(
            "counterfoil export: the e-invoices issued {from} … {to} as {} into {output}",
            formats
                .iter()
                .map(|f| f.ending().trim_start_matches('.'))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let mut sink = Sink::open(output)?;
    let mut index = String::from("number,kind,issue_date,currency,total_with_vat,files\n");
    let mut findings: Vec<String> = Vec::new();
    let sql = format!(
        "SELECT post_id, number, kind, DATE_FORMAT(issue_date, '%Y-%m-%d'), input FROM `{}`
         WHERE issue_date BETWEEN ? AND ? AND post_id > ? ORDER BY post_id LIMIT ?",
        tables.documents
    );
    let (mut last, mut documents, mut files, started) = (0u64, 0u64, 0u64, Instant::now());
    // Every name written (index.csv's reserved): no two files share one.
    let mut used: HashSet<String> = HashSet::from(["index.csv".to_owned()]);
    loop {
        let rows: Vec<(u64, String, String, String, String)> = db
            .rows(
                &sql,
                vec![
                    Value::from(from.as_str()),
                    Value::from(to.as_str()),
                    Value::from(last),
                    Value::from(CHUNK),
                ],
            )
            .await?;
        let n = rows.len() as u64;
        let chunk: Vec<Frozen> = rows
            .into_iter()
            .map(|(post_id, number, kind, issue_date, input)| Frozen {
                post_id,
                number,
                kind,
                issue_date,
                input,
            })
            .collect();
        if let Some(f) = chunk.last() {
            last = f.post_id;
        }
        for (f, made) in chunk.iter().zip(make_all(&chunk, &formats)) {
            match made {
                Ok((d, made_files)) => {
                    // Two series may render the same number (2026-0001 of
                    // two issuers): the later one's files carry its post id,
                    // then a counter, never overwriting.
                    let names = sink.put(
                        &mut used,
                        stems(&f.number, f.post_id),
                        &f.issue_date,
                        &made_files,
                    )?;
                    files += names.len() as u64;
                    index.push_str(&format!(
                        "{},{},{},{},{},{}\n",
                        csv_cell(&f.number),
                        f.kind,
                        f.issue_date,
                        d.input.currency,
                        d.amount(d.totals.with_vat),
                        csv_cell(&names.join(" "))
                    ));
                    documents += 1;
                }
                Err(why) => findings.push(format!(
                    "{} (post {}): refused by the core: {why}",
                    f.number, f.post_id
                )),
            }
        }
        if !global.json {
            eprint!(
                "\rcounterfoil export: {documents} documents, {files} files ({:.0} documents/s)",
                documents as f64 / started.elapsed().as_secs_f64().max(0.001)
            );
        }
        if n < CHUNK {
            break;
        }
    }
    // The period's invoices and credit notes without a frozen input.
    if db.table_exists(&tables.posts).await? {
        let missing: Vec<(u64, String, String)> = db
            .rows(
                &format!(
                    "SELECT p.ID, p.post_title, p.post_type FROM `{posts}` p
                     LEFT JOIN `{documents}` d ON d.post_id = p.ID
                     LEFT JOIN `{postmeta}` v ON v.post_id = p.ID AND v.meta_key = '_counterfoil_void_reason'
                     WHERE p.post_type IN ('counterfoil_invoice', 'counterfoil_cnote') AND p.post_status = 'publish'
                       AND DATE(p.post_date) BETWEEN ? AND ? AND d.post_id IS NULL AND v.meta_id IS NULL
                     ORDER BY p.ID",
                    posts = tables.posts,
                    documents = tables.documents,
                    postmeta = tables.postmeta
                ),
                vec![Value::from(from.as_str()), Value::from(to.as_str())],
            )
            .await?;
        for (id, number, kind) in missing {
            let kind = if kind == "counterfoil_cnote" {
                "credit note"
            } else {
                "invoice"
            };
            findings.push(format!(
                "{number} (post {id}): this {kind} has no e-invoice yet: no valid one could be made on the site; open it there (Invoices → View) to see what is missing"
            ));
        }
    }
    sink.write("index.csv", &to, index.as_bytes())?;
    sink.finish()?;
    if global.json {
        println!(
            "{}",
            serde_json::json!({
                "output": output, "from": from, "to": to, "documents": documents,
                "files": files, "findings": findings,
            })
        );
    } else {
        eprintln!();
        for f in &findings {
            eprintln!("finding: {f}");
        }
        eprintln!(
            "counterfoil export: {documents} documents ({files} files and index.csv) in {:.1} s into {output}; {} findings",
            started.elapsed().as_secs_f64(),
            findings.len()
        );
    }
    Ok(if findings.is_empty() {
        Outcome::Ok
    } else {
        Outcome::Findings
    })
}

/// A CSV cell, quoted when it must be.
fn csv_cell(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh folder under the workspace's target/.
    fn scratch(name: &str) -> PathBuf {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../target/cli-unit")
            .join(format!("{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    /// A file or link already at a document's planned name, inside the
    /// export's folder (there since the emptiness check): never opened,
    /// never written through, never removed; the document takes the next
    /// free name, whole (its files share one stem).
    #[test]
    fn a_planned_name_taken_on_disk_is_left_alone_and_the_next_is_used() {
        let dir = scratch("taken");
        let out = dir.join("export");
        let mut sink = Sink::open(out.to_str().unwrap()).unwrap();
        let target = dir.join("elsewhere.txt");
        std::fs::write(&target, "not the export's").unwrap();
        // 2026-0001's CII and its post-id name are taken, by a file and a link.
        std::fs::write(out.join("2026-0001.cii.xml"), "planted").unwrap();
        std::os::unix::fs::symlink(&target, out.join("2026-0001-post7.ubl.xml")).unwrap();
        let mut used = HashSet::from(["index.csv".to_owned()]);
        let files = vec![(".ubl.xml", b"ubl".to_vec()), (".cii.xml", b"cii".to_vec())];
        let names = sink
            .put(&mut used, stems("2026-0001", 7), "2026-01-02", &files)
            .unwrap();
        assert_eq!(
            names,
            ["2026-0001-post7-2.ubl.xml", "2026-0001-post7-2.cii.xml"]
        );
        assert_eq!(std::fs::read(out.join(&names[0])).unwrap(), b"ubl");
        assert_eq!(
            std::fs::read_to_string(out.join("2026-0001.cii.xml")).unwrap(),
            "planted"
        );
        assert_eq!(
            std::fs::read_to_string(&target).unwrap(),
            "not the export's"
        );
        assert!(
            !out.join("2026-0001.ubl.xml").exists(),
            "the first attempt's own file is removed"
        );
        assert!(
            std::fs::symlink_metadata(out.join("2026-0001-post7.ubl.xml"))
                .unwrap()
                .file_type()
                .is_symlink()
        );
        // The names taken stay taken in this export: a second 2026-0001
        // (another post) gets its own.
        let again = sink
            .put(&mut used, stems("2026-0001", 8), "2026-01-02", &files)
            .unwrap();
        assert_eq!(
            again,
            ["2026-0001-post8.ubl.xml", "2026-0001-post8.cii.xml"]
        );
        // index.csv is never followed either.
        std::os::unix::fs::symlink(&target, out.join("index.csv")).unwrap();
        assert!(sink.write("index.csv", "2026-12-31", b"x").is_err());
        assert_eq!(
            std::fs::read_to_string(&target).unwrap(),
            "not the export's"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Names already used in the export are skipped until one is free: a
    /// number that reads like another's post-id name (`X-post9`) does not
    /// make the second `X` of post 9 overwrite it (before: one retry, the
    /// same name, the first document's files overwritten).
    #[test]
    fn names_are_tried_until_every_one_is_free() {
        let mut used = HashSet::new();
        let dir = scratch("loop");
        let mut sink = Sink::open(dir.join("out").to_str().unwrap()).unwrap();
        let files = vec![(".pdf", b"%PDF".to_vec())];
        let mut put = |number: &str, post: u64| {
            sink.put(&mut used, stems(number, post), "2026-01-01", &files)
                .unwrap()
                .remove(0)
        };
        assert_eq!(put("X", 1), "X.pdf");
        assert_eq!(put("X-post9", 2), "X-post9.pdf");
        assert_eq!(put("X", 9), "X-post9-2.pdf");
        assert_eq!(put("X", 9), "X-post9-3.pdf");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
