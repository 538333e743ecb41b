// The one translation unit that compiles Asio's and Beast's out-of-line implementation
// (BOOST_ASIO_SEPARATE_COMPILATION / BOOST_BEAST_SEPARATE_COMPILATION are PUBLIC definitions of
// basalt_client; cpp-style-notes §4.3). No other file may include these headers.
#include <boost/asio/impl/src.hpp>
#include <boost/asio/ssl/impl/src.hpp>
#include <boost/beast/src.hpp>
