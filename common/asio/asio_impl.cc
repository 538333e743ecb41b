// The one translation unit that compiles Boost.Asio, Asio SSL and Beast out of line.
//
// Every Basalt library that uses Asio/Beast links `basalt_asio`, which carries the PUBLIC
// definitions BOOST_ASIO_SEPARATE_COMPILATION and BOOST_BEAST_SEPARATE_COMPILATION, so all
// TUs agree (ODR) and the heavy implementation is compiled once. No other file may include
// these src.hpp headers: a second copy gives duplicate symbols at link time.

#include <boost/asio/impl/src.hpp>
#include <boost/asio/ssl/impl/src.hpp>
#include <boost/beast/src.hpp>
