# Required third-party packages (all from Debian; scripts/setup.sh installs them).
find_package(Threads REQUIRED)
find_package(TBB REQUIRED)
find_package(spdlog REQUIRED)
find_package(GTest REQUIRED)
find_package(dnnl REQUIRED)
find_package(OpenMP REQUIRED)  # oneDNN (Debian) runs on OpenMP; Cohort sets its thread count
find_package(yaml-cpp REQUIRED)
find_package(nlohmann_json REQUIRED)
find_package(CLI11 REQUIRED)
find_package(ZLIB REQUIRED)
find_package(JPEG REQUIRED)  # libjpeg-turbo's libjpeg API
find_package(PNG REQUIRED)
find_package(MPI REQUIRED COMPONENTS C)
find_package(PkgConfig REQUIRED)
pkg_check_modules(OPENBLAS REQUIRED IMPORTED_TARGET openblas)
# Linear-time regular expressions for user-given name patterns (Note [Name patterns]).
pkg_check_modules(RE2 REQUIRED IMPORTED_TARGET re2)
# Cohort uses MPI's C API from C++: keep Open MPI's deprecated C++ bindings out.
set_property(TARGET MPI::MPI_C APPEND PROPERTY
  INTERFACE_COMPILE_DEFINITIONS OMPI_SKIP_MPICXX=1 MPICH_SKIP_MPICXX=1)
