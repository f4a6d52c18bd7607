# The PyPI wheels' export_<pkg>__rosidl_generator_pyExport.cmake files name the wheel builder's
# Python and NumPy include directories (/opt/python/...), which do not exist here, and CMake
# refuses imported targets with missing include directories. Passed with CMAKE_PROJECT_INCLUDE
# (scripts/build_test_interfaces.sh, scripts/build_launch_workspace.sh), this defers to the end of
# configuration a pass that resets INTERFACE_INCLUDE_DIRECTORIES of every imported
# *__rosidl_generator_py target to RD_PYTHON_INCLUDE_DIR and RD_NUMPY_INCLUDE_DIR (this
# interpreter's). site-packages is never edited.
function(_rd_fix_wheel_py_exports)
  get_directory_property(_targets DIRECTORY "${CMAKE_SOURCE_DIR}" IMPORTED_TARGETS)
  foreach(_t IN LISTS _targets)
    if(_t MATCHES "__rosidl_generator_py$")
      set_target_properties(${_t} PROPERTIES
        INTERFACE_INCLUDE_DIRECTORIES "${RD_PYTHON_INCLUDE_DIR};${RD_NUMPY_INCLUDE_DIR}")
    endif()
  endforeach()
endfunction()
cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL _rd_fix_wheel_py_exports)
