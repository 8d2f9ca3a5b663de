// tool_report.hpp -- what the four example tools share: remembering the first thing that
// went wrong, checking rocprofiler calls without ever aborting the application, and the
// one result line each tool writes when it is finalized.
//
// The line goes to the file named by ROCWASM_TOOL_OUT (opened for appending, so several
// tools loaded into one process can share it), else to standard error:
//
//     <tool>: ok key=value key=value ...
//     <tool>: FAIL <reason> key=value key=value ...
//
// <reason> is one word without '=' (spaces become '_'), so a reader can split the line on
// whitespace and take every token holding '=' as a count.
//
// Everything here has internal linkage: the tools are loaded into one process with
// RTLD_GLOBAL, and inline functions with external linkage (and their static data) would
// be merged across them by symbol interposition.
#pragma once

#include <rocprofiler-sdk/rocprofiler.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

namespace
{
namespace tool_report
{
/// One tool's verdict: the first failure (if any) and the counts it reports.
class report
{
public:
    explicit report(const char* tool)
    : m_tool{tool}
    {}

    /// Remembers `why` if nothing failed before (later failures are only printed).
    void fail(std::string why)
    {
        for(auto& c : why)
            if(c == ' ' || c == '=' || c == '\t' || c == '\n') c = '_';
        std::fprintf(stderr, "%s: %s\n", m_tool, why.c_str());
        auto lock = std::lock_guard<std::mutex>{m_mutex};
        if(m_reason.empty()) m_reason = std::move(why);
    }

    /// Checks a rocprofiler call made during configuration: on an error the tool fails
    /// with the call's name and status name, and the caller decides how to go on.
    bool check(rocprofiler_status_t status, const char* call)
    {
        if(status == ROCPROFILER_STATUS_SUCCESS) return true;
        const char* name = rocprofiler_get_status_name(status);
        fail(std::string{call} + ":" + (name ? name : std::to_string(static_cast<int>(status))));
        return false;
    }

    /// Fails with `what` unless `condition` holds (a fini-time invariant).
    void expect(bool condition, const char* what)
    {
        if(!condition) fail(std::string{"check:"} + what);
    }

    bool failed() const
    {
        auto lock = std::lock_guard<std::mutex>{m_mutex};
        return !m_reason.empty();
    }

    /// Writes the result line (once; later calls do nothing): the counts, then `texts`
    /// (their spaces and '=' made '_', so the line still splits on whitespace).
    void write(const std::vector<std::pair<const char*, uint64_t>>&    counts,
               const std::vector<std::pair<const char*, std::string>>& texts = {})
    {
        auto line = std::string{m_tool} + ": ";
        {
            auto lock = std::lock_guard<std::mutex>{m_mutex};
            if(m_written) return;
            m_written = true;
            line += m_reason.empty() ? std::string{"ok"} : "FAIL " + m_reason;
        }
        for(const auto& [key, value] : counts)
            line += std::string{" "} + key + "=" + std::to_string(value);
        for(auto [key, text] : texts)
        {
            for(auto& c : text)
                if(c == ' ' || c == '=' || c == '\t' || c == '\n') c = '_';
            line += std::string{" "} + key + "=" + text;
        }
        line += "\n";

        // One write(2) on an O_APPEND descriptor: lines of several tools (or processes)
        // never interleave.
        const char* path = std::getenv("ROCWASM_TOOL_OUT");
        int         fd   = -1;
        if(path && *path) fd = ::open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        const int out = fd >= 0 ? fd : STDERR_FILENO;
        if(::write(out, line.data(), line.size()) < 0) std::perror(m_tool);
        if(fd >= 0) ::close(fd);
    }

private:
    const char*        m_tool;
    mutable std::mutex m_mutex   = {};
    std::string        m_reason  = {};
    bool               m_written = false;
};
}  // namespace tool_report
}  // namespace
