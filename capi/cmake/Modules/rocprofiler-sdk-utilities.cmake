# rocprofiler-sdk-utilities.cmake -- CMake helpers of the rocprofiler-sdk package, as
# rocwasm provides them (written by `rocwasm sdk prefix`; included by
# rocprofiler-sdk-config.cmake, which also puts this directory on CMAKE_MODULE_PATH).
#
# rocwasm's agents are the simulated runtime's GPUs, so "the system's architectures" are
# the simulated scenario's, found by the same rules the simulated runtime follows:
# the TOML file named by ROCWASM_SIM_SCENARIO (each [[devices]] table's `arch`, gfx90a
# when a table has none, one gfx90a GPU when the file describes none), resized by
# ROCWASM_SIM_DEVICES (growing repeats the last GPU), every one renamed by
# ROCWASM_SIM_ARCH. The environment is read when the function is called. Only devices
# written as [[devices]] tables are read; an inline `devices = [...]` array is not.

include_guard(GLOBAL)

# The simulated runtime's default GPU.
set(_ROCWASM_SIM_DEFAULT_ARCH "gfx90a")

# rocprofiler_sdk_get_gfx_architectures(<var> [ECHO] [PREFIX <text>] [DELIM <text>])
#
# Sets <var> in the caller's scope to the list of distinct gfx architectures of the
# agents tools will see (e.g. "gfx90a;gfx942"). ECHO also prints them in a STATUS
# message ("System architectures: ..."), joined by DELIM (default ", ") and preceded
# by PREFIX.
function(rocprofiler_sdk_get_gfx_architectures _out)
    cmake_parse_arguments(_opt "ECHO" "PREFIX;DELIM" "" ${ARGN})
    if(NOT DEFINED _opt_DELIM)
        set(_opt_DELIM ", ")
    endif()

    # One entry per simulated GPU, in order.
    set(_gpus "")
    set(_scenario "$ENV{ROCWASM_SIM_SCENARIO}")
    if(NOT _scenario STREQUAL "" AND EXISTS "${_scenario}")
        file(STRINGS "${_scenario}" _lines)
        set(_in_device FALSE)
        foreach(_line IN LISTS _lines)
            string(STRIP "${_line}" _line)
            if(_line MATCHES "^\\[\\[[ \t]*devices[ \t]*\\]\\]")
                list(APPEND _gpus "${_ROCWASM_SIM_DEFAULT_ARCH}")
                set(_in_device TRUE)
            elseif(_line MATCHES "^\\[")
                set(_in_device FALSE)
            elseif(_in_device AND _line MATCHES "^arch[ \t]*=[ \t]*[\"']([^\"']*)[\"']")
                list(LENGTH _gpus _n)
                math(EXPR _last "${_n} - 1")
                list(REMOVE_AT _gpus ${_last})
                list(APPEND _gpus "${CMAKE_MATCH_1}")
            endif()
        endforeach()
    endif()
    if(_gpus STREQUAL "")
        set(_gpus "${_ROCWASM_SIM_DEFAULT_ARCH}")
    endif()

    set(_count "$ENV{ROCWASM_SIM_DEVICES}")
    if(_count MATCHES "^[ \t]*([0-9]+)[ \t]*$")
        set(_count "${CMAKE_MATCH_1}")
        list(LENGTH _gpus _n)
        if(_count EQUAL 0)
            set(_gpus "")
        elseif(_count LESS _n)
            list(SUBLIST _gpus 0 ${_count} _gpus)
        else()
            list(GET _gpus -1 _repeat)
            while(_n LESS _count)
                list(APPEND _gpus "${_repeat}")
                math(EXPR _n "${_n} + 1")
            endwhile()
        endif()
    endif()

    set(_arch "$ENV{ROCWASM_SIM_ARCH}")
    if(NOT _arch STREQUAL "" AND NOT _gpus STREQUAL "")
        set(_gpus "${_arch}")
    endif()

    list(REMOVE_DUPLICATES _gpus)
    set(${_out} "${_gpus}" PARENT_SCOPE)
    if(_opt_ECHO)
        string(REPLACE ";" "${_opt_DELIM}" _shown "${_gpus}")
        message(STATUS "${_opt_PREFIX}System architectures: ${_shown}")
    endif()
endfunction()

# rocprofiler_sdk_pc_sampling_disabled(<var> [ECHO] [PREFIX <text>])
# rocprofiler_sdk_pc_sampling_stochastic_disabled(<var> [ECHO] [PREFIX <text>])
#
# Set <var> to TRUE: rocwasm does not implement PC sampling (of either method) on any
# agent.
function(rocprofiler_sdk_pc_sampling_disabled _out)
    cmake_parse_arguments(_opt "ECHO" "PREFIX" "" ${ARGN})
    set(${_out} TRUE PARENT_SCOPE)
    if(_opt_ECHO)
        message(STATUS "${_opt_PREFIX}PC sampling is disabled (rocwasm does not implement it)")
    endif()
endfunction()

function(rocprofiler_sdk_pc_sampling_stochastic_disabled _out)
    cmake_parse_arguments(_opt "ECHO" "PREFIX" "" ${ARGN})
    set(${_out} TRUE PARENT_SCOPE)
    if(_opt_ECHO)
        message(
            STATUS
                "${_opt_PREFIX}Stochastic PC sampling is disabled (rocwasm does not implement it)")
    endif()
endfunction()
