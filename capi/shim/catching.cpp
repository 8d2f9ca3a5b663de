// The boundary between rocwasm's C API (Rust) and a native tool's code.
//
// A tool written in C++ may let an exception escape a function it handed
// the SDK (AMD's test tools throw on a failed call). Rust cannot catch a
// foreign exception, and one reaching a Rust frame that must not unwind
// aborts the process. Every call into a tool therefore goes through
// `rocwasm_capi_catching`: it runs the Rust thunk (which makes the call,
// through a "C-unwind" function pointer, so the exception may pass its
// frames) inside try/catch, and reports a caught exception instead of
// ending the application.
#include <exception>
#include <cstring>
#include <cstdio>

extern "C" int
rocwasm_capi_catching(void (*thunk)(void*), void* context, char* what, size_t what_size)
{
    try
    {
        thunk(context);
        return 0;
    } catch(const std::exception& e)
    {
        if(what != nullptr && what_size > 0)
        {
            std::strncpy(what, e.what(), what_size - 1);
            what[what_size - 1] = '\0';
        }
        return 1;
    } catch(...)
    {
        if(what != nullptr && what_size > 0)
        {
            std::strncpy(what, "an exception not derived from std::exception", what_size - 1);
            what[what_size - 1] = '\0';
        }
        return 1;
    }
}
