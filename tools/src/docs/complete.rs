//! Bash completions, one file per program (bash-completion loads
//! `completions/<program>` when the program is first completed; zsh reads
//! them through `bashcompinit`): a stage program's options from its own
//! `--help`, and for `fsim` the settings of the table as `VAR=` words, the
//! words a value may be, and folders.

use super::help::Help;
use super::man::value_words;
use fsim::driver::SETTINGS;

/// A shell function name for a program (`fsim-sort` → `_fsim_sort`).
fn function(program: &str) -> String {
    format!("_{}", program.replace('-', "_"))
}

/// The completion of a stage program: its options when the word starts
/// with `-`, else bash's default (files).
pub fn program(program: &str, help: &Help) -> String {
    let mut names: Vec<&str> = help.items().flat_map(|i| i.names()).collect();
    names.sort_unstable();
    names.dedup();
    let f = function(program);
    format!(
        "# bash completion of {program}, generated from `{program} --help` by fsim-docs\n\
         {f}() {{\n\
         \x20   local cur=${{COMP_WORDS[COMP_CWORD]}}\n\
         \x20   [[ $cur == -* ]] || return 0\n\
         \x20   COMPREPLY=($(compgen -W '{}' -- \"$cur\"))\n\
         }}\n\
         complete -o default -F {f} {program}\n",
        names.join(" ")
    )
}

/// The completion of `fsim [VAR=value...] FOLDER`. The word is taken from
/// the line itself, because bash splits words at `=` (COMP_WORDBREAKS).
pub fn fsim() -> String {
    let mut vars = Vec::new();
    let mut cases = String::new();
    for s in SETTINGS.iter().filter(|s| s.var != "REPO") {
        vars.push(format!("{}=", s.var));
        let words = value_words(s);
        let action = match s.var {
            _ if !words.is_empty() => format!("-W '{}'", words.join(" ")),
            "WORK" | "PREVIOUS" | "BIN" => "-d".into(),
            "TEMPLATES" => "-f".into(),
            _ => continue,
        };
        cases += &format!(
            "        {}) COMPREPLY=($(compgen {action} -- \"$val\")) ;;\n",
            s.var
        );
    }
    format!(
        "# bash completion of fsim, generated from its settings table by fsim-docs\n\
         _fsim() {{\n\
         \x20   local line=${{COMP_LINE:0:COMP_POINT}}\n\
         \x20   local cur=${{line##*[[:space:]]}}\n\
         \x20   if [[ $cur == *=* ]]; then\n\
         \x20       local var=${{cur%%=*}} val=${{cur#*=}}\n\
         \x20       case $var in\n\
         {cases}\
         \x20       *) COMPREPLY=() ;;\n\
         \x20       esac\n\
         \x20       # bash's word is the value when it splits at `=`, else the whole.\n\
         \x20       if [[ $COMP_WORDBREAKS != *=* ]]; then\n\
         \x20           COMPREPLY=(\"${{COMPREPLY[@]/#/$var=}}\")\n\
         \x20       fi\n\
         \x20       return 0\n\
         \x20   fi\n\
         \x20   compopt -o nospace 2>/dev/null\n\
         \x20   COMPREPLY=($(compgen -W '{}' -- \"$cur\") $(compgen -d -S / -- \"$cur\"))\n\
         }}\n\
         complete -F _fsim fsim\n",
        vars.join(" ")
    )
}
