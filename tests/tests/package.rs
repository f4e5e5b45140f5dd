//! The release artefacts of `./scripts/package` (target/package/), installed
//! as people install them: the extension's Debian package unpacked into a
//! throw-away root (its control file, its ini, its maintainer scripts run
//! with phpenmod/phpdismod recorded) and
//! its `.so` loaded by PHP to run the article's functions against the
//! harness's MariaDB; the CLI's package (binary, man pages, completions);
//! the plugin zip unzipped into a fresh WordPress, activated, and answering
//! one signed callback with 201. And one version everywhere.
//!
//! `./scripts/test` builds the packages before this suite; run alone, build
//! them first with `./scripts/package`.

use std::path::{Path, PathBuf};
use std::process::Command;

use counterfoil_tests::mariadb::MariaDb;
use counterfoil_tests::php::repo_root;
use counterfoil_tests::webhook::deliver;
use counterfoil_tests::wordpress::WordPress;

const VERSION: &str = env!("CARGO_PKG_VERSION");

fn package_dir() -> PathBuf {
    repo_root().join("target/package")
}

/// The one artefact whose name starts with `prefix` (built by ./scripts/package).
fn artefact(prefix: &str) -> PathBuf {
    let found: Vec<PathBuf> = std::fs::read_dir(package_dir())
        .unwrap_or_else(|e| {
            panic!(
                "{}: {e}: run ./scripts/package first",
                package_dir().display()
            )
        })
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(prefix))
        })
        .collect();
    assert_eq!(found.len(), 1, "one {prefix}* in target/package: {found:?}");
    found[0].clone()
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn scratch(name: &str) -> PathBuf {
    let dir = counterfoil_tests::target_dir()
        .join("harness")
        .join(format!("pkg-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn php_config(arg: &str) -> String {
    run(Command::new("php-config").arg(arg)).trim().to_owned()
}

#[test]
fn the_extension_package_installs_into_a_root_and_its_so_works() {
    let deb = artefact("php-counterfoil_");
    assert!(
        deb.file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .contains(&format!("_{VERSION}_")),
        "{deb:?}"
    );
    let field = |f: &str| {
        run(Command::new("dpkg-deb").arg("-f").arg(&deb).arg(f))
            .trim()
            .to_owned()
    };
    assert_eq!(field("Version"), VERSION);
    let api = php_config("--phpapi");
    assert!(
        field("Depends").contains(&format!("phpapi-{api}")),
        "it refuses a PHP it was not built for: {}",
        field("Depends")
    );
    // Unpack into a throw-away root, and its maintainer scripts beside it.
    let root = scratch("ext-root");
    run(Command::new("dpkg-deb").arg("-x").arg(&deb).arg(&root));
    let control = scratch("ext-control");
    run(Command::new("dpkg-deb").arg("-e").arg(&deb).arg(&control));
    let ext_dir = php_config("--extension-dir");
    let so = root
        .join(ext_dir.trim_start_matches('/'))
        .join("counterfoil.so");
    assert!(so.is_file(), "{so:?} in the PHP's extension directory");
    let minor: String = php_config("--version")
        .split('.')
        .take(2)
        .collect::<Vec<_>>()
        .join(".");
    let ini_path = root.join(format!("etc/php/{minor}/mods-available/counterfoil.ini"));
    let ini = std::fs::read_to_string(&ini_path).unwrap();
    assert!(
        ini.lines().any(|l| l == "extension=counterfoil.so"),
        "{ini}"
    );
    assert!(ini.contains("; priority="), "phpenmod's priority line");
    // Every directive the extension registers is documented, commented out.
    let info = run(Command::new("php")
        .arg("-n")
        .arg("-d")
        .arg(format!("extension={}", so.display()))
        .args(["--ri", "counterfoil"]));
    let directives: Vec<&str> = info
        .lines()
        .filter_map(|l| l.split(" => ").next())
        .filter(|d| d.starts_with("counterfoil."))
        .collect();
    assert!(directives.len() >= 4, "{info}");
    for d in &directives {
        assert!(
            ini.lines().any(|l| l.starts_with(&format!(";{d} ="))),
            "{d} is not documented (commented out) in counterfoil.ini"
        );
        assert!(
            !ini.lines()
                .any(|l| l.starts_with(&format!("{d} ")) || l.starts_with(&format!("{d}="))),
            "{d} is set, not commented out"
        );
    }
    assert_eq!(
        std::fs::read_to_string(control.join("conffiles"))
            .unwrap()
            .trim(),
        format!("/etc/php/{minor}/mods-available/counterfoil.ini")
    );
    let postinst = std::fs::read_to_string(control.join("postinst")).unwrap();
    assert!(
        postinst.contains(&format!("phpenmod -v {minor} counterfoil")),
        "{postinst}"
    );
    let prerm = std::fs::read_to_string(control.join("prerm")).unwrap();
    assert!(
        prerm.contains(&format!("phpdismod -v {minor} counterfoil")),
        "{prerm}"
    );
    for script in ["postinst", "prerm"] {
        run(Command::new("sh").arg("-n").arg(control.join(script)));
    }
    // Their effect, with phpenmod/phpdismod recorded instead of run (they
    // would change this machine's PHP): enabled on configure, disabled on
    // remove and purge, untouched on upgrade.
    let fake = scratch("fake-phpenmod");
    let calls = fake.join("calls");
    for tool in ["phpenmod", "phpdismod"] {
        let path = fake.join(tool);
        std::fs::write(
            &path,
            format!("#!/bin/sh\necho \"{tool} $*\" >> {}\n", calls.display()),
        )
        .unwrap();
        run(Command::new("chmod").arg("+x").arg(&path));
    }
    let path = format!(
        "{}:{}",
        fake.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for (script, arg) in [
        ("postinst", "configure"),
        ("prerm", "upgrade"),
        ("prerm", "remove"),
        ("postinst", "abort-upgrade"),
        ("prerm", "purge"),
    ] {
        run(Command::new("sh")
            .arg(control.join(script))
            .arg(arg)
            .env("PATH", &path));
    }
    assert_eq!(
        std::fs::read_to_string(&calls).unwrap(),
        format!("phpenmod -v {minor} counterfoil\nphpdismod -v {minor} counterfoil\nphpdismod -v {minor} counterfoil\n"),
        "enable on configure only; disable on remove and purge only"
    );
    // The unpacked .so, loaded the way the ini loads it, runs the article's
    // functions against a real MariaDB and reports the release's version.
    let url = MariaDb::shared().fresh_database("pkg_ext").unwrap();
    let out = run(Command::new("php")
        .arg("-n")
        .arg("-d")
        .arg(format!("extension_dir={}", so.parent().unwrap().display()))
        .arg("-d")
        .arg("extension=counterfoil.so")
        .args([
            "-r",
            "Counterfoil\\configure(['database_url' => getenv('U')]);
             var_export(initialize_invoice_sequence(42, 2019, 2)); echo ' ';
             echo allocate_invoice_number(42, 2019), ' ', allocate_invoice_number(42, 2019), ' ';
             echo phpversion('counterfoil');",
        ])
        .env("U", &url));
    assert_eq!(out, format!("true 2019-0002 2019-0003 {VERSION}"));
}

#[test]
fn the_cli_package_has_its_binary_man_pages_and_completions() {
    let deb = artefact("counterfoil_");
    let root = scratch("cli-root");
    run(Command::new("dpkg-deb").arg("-x").arg(&deb).arg(&root));
    let bin = root.join("usr/bin/counterfoil");
    assert_eq!(
        run(Command::new(&bin).arg("--version")).trim(),
        format!("counterfoil {VERSION}")
    );
    let man = root.join("usr/share/man/man1");
    for page in [
        "counterfoil.1.gz",
        "counterfoil-series.1.gz",
        "counterfoil-export.1.gz",
    ] {
        let text = run(Command::new("zcat").arg(man.join(page)));
        assert!(
            text.starts_with(".ie") || text.contains(".TH"),
            "{page}: a man page"
        );
    }
    let top = run(Command::new("zcat").arg(man.join("counterfoil.1.gz")));
    assert!(
        top.contains("series") && top.contains("database\\-url"),
        "{top}"
    );
    for completion in [
        "usr/share/bash-completion/completions/counterfoil",
        "usr/share/zsh/vendor-completions/_counterfoil",
        "usr/share/fish/vendor_completions.d/counterfoil.fish",
    ] {
        let text = std::fs::read_to_string(root.join(completion)).unwrap();
        assert!(
            text.contains("allocate"),
            "{completion} completes the commands"
        );
    }
    run(Command::new("bash")
        .arg("-n")
        .arg(root.join("usr/share/bash-completion/completions/counterfoil")));
    // The packaged binary works.
    let url = MariaDb::shared().fresh_database("pkg_cli").unwrap();
    run(Command::new(&bin)
        .args(["series", "init", "7:2026", "--start", "5"])
        .env("DATABASE_URL", &url));
    assert_eq!(
        run(Command::new(&bin)
            .args(["series", "allocate", "7:2026"])
            .env("DATABASE_URL", &url)),
        "5\n"
    );
}

#[test]
fn the_plugin_zip_installs_into_a_fresh_wordpress_and_answers_a_callback() {
    let zip = artefact("counterfoil-plugin-");
    assert!(zip.to_str().unwrap().ends_with(&format!("-{VERSION}.zip")));
    let listing = run(Command::new("python3")
        .args(["-m", "zipfile", "-l"])
        .arg(&zip));
    for needed in [
        "counterfoil/counterfoil.php",
        "counterfoil/readme.txt",
        "counterfoil/uninstall.php",
        "counterfoil/assets/counterfoil.wasm",
        "counterfoil/languages/counterfoil.pot",
    ] {
        assert!(
            listing.contains(needed),
            "{needed} missing from the zip:\n{listing}"
        );
    }
    for unwanted in ["counterfoil/tests/", ".distignore", "package.json"] {
        assert!(
            !listing.contains(unwanted),
            "{unwanted} shipped:\n{listing}"
        );
    }
    // A fresh WordPress whose plugin comes from the zip, not the repository.
    let wp = WordPress::install_with(MariaDb::shared(), "pkg_zip", None, false).unwrap();
    let plugins = wp.dir().join("wp-content/plugins");
    std::fs::remove_dir_all(plugins.join("counterfoil")).unwrap();
    run(Command::new("python3")
        .args(["-m", "zipfile", "-e"])
        .arg(&zip)
        .arg(&plugins));
    let activated = wp
        .eval(
            false,
            "require_once ABSPATH . 'wp-admin/includes/plugin.php';
             $r = activate_plugin('counterfoil/counterfoil.php');
             echo is_wp_error($r) ? $r->get_error_message() : 'active';
             initialize_invoice_sequence(1, 2026, 1);",
        )
        .unwrap();
    assert_eq!(activated, "active");
    let secret = wp.webhook_secret().unwrap();
    let site = wp.serve(true, 2).unwrap();
    let body = br#"{"gateway":"stripe","transaction_id":"zip-1","user_id":1,"year":2026}"#;
    let r = deliver(site.port(), &secret, body, 0).unwrap();
    assert_eq!(r.status, 201, "{r:?}");
    let v: serde_json::Value = serde_json::from_str(&r.body).unwrap();
    assert_eq!(v["number"], "2026-0001", "{v}");
}

/// One version: the crates, the plugin's header, constant and readme, the
/// changelog's newest entry, and (through the other tests) the packages and
/// the loaded extension.
#[test]
fn one_version_everywhere() {
    let root = repo_root();
    let read = |p: &str| std::fs::read_to_string(root.join(p)).unwrap();
    let plugin = read("wp-plugin/counterfoil.php");
    assert!(
        plugin
            .lines()
            .any(|l| l.trim_start_matches([' ', '*']).starts_with("Version:")
                && l.trim().ends_with(VERSION)),
        "plugin header Version"
    );
    assert!(plugin.contains(&format!("define( 'COUNTERFOIL_VERSION', '{VERSION}' );")));
    assert!(read("wp-plugin/readme.txt").contains(&format!("Stable tag: {VERSION}\n")));
    let changelog = read("CHANGELOG.md");
    let newest = changelog
        .lines()
        .find(|l| l.starts_with("## "))
        .expect("a version entry");
    assert!(newest.starts_with(&format!("## {VERSION} ")), "{newest}");
    for manifest in ["core", "php-ext", "cli", "wasm", "tests", "benches"] {
        let text = read(&format!("{manifest}/Cargo.toml"));
        assert!(
            text.contains("version.workspace = true"),
            "{manifest} takes the workspace's version"
        );
    }
    let _ = Path::new("");
}
