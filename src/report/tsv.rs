//! The tsv report: one row a link, with rows for the folder pairs, the
//! hard links and the "same content, different file" groups.

use super::model::{self, Pair};
use super::{percent, symmetric, Report};

/// The first line of the tsv report. Scripts read it by position, so new
/// columns go at the end (`view_a`, `view_b`).
pub(crate) const TSV_HEADER: &str = "cluster\ttype\tcluster_files\tcluster_bytes\tpercent_symmetric\tbytes_in_common\tpercent_of_a\tpercent_of_b\tsize_a\tsize_b\tpath_a\tpath_b\tcluster_reclaimable_bytes\tview_a\tview_b\n";

impl Report {
    /// The tsv rows of the names of one file: the first name with each
    /// other (`cluster` = `hard-links`, `type` = the file's id, sizes the
    /// file's, reclaimable 0), and a `note` row (`type` = `walk`) with
    /// [`Report::walk_note`].
    pub(crate) fn tsv_hard_links(&self) -> String {
        let mut o = String::new();
        for h in &self.hard_links {
            let (n, size) = (h.files.len(), h.size);
            for &f in &h.files[1..] {
                o.push_str(&format!(
                    "hard-links\t{}\t{n}\t{size}\t100.0\t{size}\t100.0\t100.0\t{size}\t{size}\t{}\t{}\t0\t\t\n",
                    h.id,
                    self.path(h.files[0]),
                    self.path(f),
                ));
            }
        }
        if let Some(note) = self.walk_note() {
            o.push_str(&format!(
                "note\twalk\t0\t0\t0.0\t0\t0.0\t0.0\t0\t0\t\t{note}\t0\t\t\n"
            ));
        }
        o
    }

    /// The tsv rows of the "same content, different file" groups: the
    /// first file of each group with each other (`cluster` =
    /// `same-content`, `type` = the group's id).
    pub(crate) fn tsv_same_content(&self) -> String {
        let mut o = String::new();
        for g in &self.same_content {
            for &f in &g.files[1..] {
                o.push_str(&format!(
                    "same-content\t{}\t{}\t{}\t100.0\t{}\t100.0\t100.0\t{}\t{}\t{}\t{}\t0\t{}\t{}\n",
                    g.id,
                    g.files.len(),
                    g.size * g.files.len() as u64,
                    g.size,
                    g.size,
                    g.size,
                    self.path(g.files[0]),
                    self.path(f),
                    self.view_field(g.files[0]),
                    self.view_field(f),
                ));
            }
        }
        o
    }

    /// One row of the tsv report.
    pub(crate) fn tsv_link(&self, c: &model::Cluster, l: &Pair) -> String {
        let (sa, sb) = (self.size(l.a), self.size(l.b));
        format!(
            "{}\t{}\t{}\t{}\t{:.1}\t{}\t{:.1}\t{:.1}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\n",
            c.id,
            c.kind,
            c.files.len(),
            c.total_size,
            symmetric(l.common, sa, sb),
            l.common,
            percent(l.common, sa),
            percent(l.common, sb),
            sa,
            sb,
            self.path(l.a),
            self.path(l.b),
            c.reclaimable,
            self.view_field(l.a),
            self.view_field(l.b)
        )
    }
}
