// `tmmu export ID --format F`: a recorded session as a report (HTML, PDF) or data (CSV, JSON,
// Chrome trace).
#include "commands.h"

#include "report/export.h"
#include "session_store.h"

#include "core/failure.h"
#include "io/file_io.h"

#include <cstdio>
#include <fmt/format.h>

namespace tmmu::cli {
namespace {

using namespace tmmu::sessions;

constexpr const char* kHelp =
    R"(usage: tmmu export ID --format FORMAT [--out FILE] [--sessions PATH]

Exports recorded session ID (see `tmmu session list`).

formats:
  html           self-contained report: inputs, hashes, metrics, memory and layout charts,
                 plan notes, the 2,000 largest tensors
  pdf            the same report on A4 pages (the 300 largest tensors)
  csv            every tensor: id, name, role, dtype, arena, buffer, slot, offset, size,
                 alignment, begin, end
  json           the whole session as one document ("format": "tmmu-session")
  chrome-trace   Trace Event Format JSON for Perfetto / chrome://tracing: a process per arena,
                 a thread per slot, tensors as slices; one time step = 1 ms

options:
  --format FORMAT   one of the formats above (required)
  --out FILE        output file (default session-ID.EXT in the current directory; - for stdout)
  --sessions PATH   sessions database (default $XDG_DATA_HOME/tmmu/sessions.db, else
                    ~/.local/share/tmmu/sessions.db)

Exit status: 0 written; 2 usage error or no such session; 16 (IO_ERROR) when the database is
missing, damaged or not a sessions database, or the output cannot be written; 10 +
CORRUPT_CHECKPOINT when the stored plan does not decode. A session that fails its integrity
check (a plan hash, total or seal that does not match; see tmmu session --help) is exported as
stored, with an ALTERED warning on stderr and in the report ("altered" in JSON).
)";

} // namespace

int cmd_export(Args& args) {
    if (args.flag("--help") || args.flag("-h")) {
        std::fputs(kHelp, stdout);
        return 0;
    }
    std::optional<std::string> format = args.value("--format");
    std::optional<std::string> out = args.value("--out");
    std::string db = sessions_db_path(args.value("--sessions"));
    auto pos = args.positionals(1, 1);
    if (!format)
        fail(FailureCode::InvalidArgument, "--format",
             "required: html, pdf, csv, json or chrome-trace");
    std::optional<ExportFormat> f = parse_export_format(*format);
    if (!f)
        fail(FailureCode::InvalidArgument, "--format",
             fmt::format("unknown format '{}'; expected html, pdf, csv, json or chrome-trace",
                         *format));
    int64_t id = parse_session_id(pos[0]);
    Session s = SessionStore(db, StoreAccess::ExistingOnly).load(id);
    std::string bytes = export_session(s, *f);
    std::string path = out.value_or(fmt::format("session-{}{}", id, export_extension(*f)));
    write_output(path, bytes);
    if (s.altered)
        fmt::print(stderr, "tmmu: warning: session {} is altered ({}); exported as stored\n", id,
                   s.altered_reason);
    fmt::print(stderr, "wrote {} ({} bytes)\n", is_stdout_path(path) ? "stdout" : path,
               bytes.size());
    return 0;
}

} // namespace tmmu::cli
