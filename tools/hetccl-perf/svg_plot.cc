// SVG line chart of bus bandwidth against message size (log-2 x axis), drawn without any library.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "report.hpp"

namespace hetccl::perf {
namespace {

constexpr double kWidth = 800, kHeight = 480;
constexpr double kLeft = 70, kRight = 20, kTop = 40, kBottom = 60;

std::string sizeLabel(double bytes) {
  const char* units[] = {"B", "K", "M", "G", "T"};
  int u = 0;
  while (bytes >= 1024 && u < 4) bytes /= 1024, ++u;
  std::ostringstream os;
  os << bytes << units[u];
  return os.str();
}

/// A "nice" tick step (1, 2 or 5 times a power of ten) giving about `ticks` intervals up to maxValue.
double niceStep(double maxValue, int ticks) {
  const double raw = maxValue / ticks;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * magnitude) return m * magnitude;
  return 10 * magnitude;
}

}  // namespace

std::string toSvgPlot(const PerfRun& run) {
  double minLog = 0, maxLog = 1, maxBw = 0;
  bool first = true;
  for (const auto& s : run.sizes) {
    if (s.bytes == 0) continue;
    const double l = std::log2(static_cast<double>(s.bytes));
    minLog = first ? l : std::min(minLog, l);
    maxLog = first ? l : std::max(maxLog, l);
    first = false;
    maxBw = std::max({maxBw, s.outOfPlace.busBw, s.inPlace.busBw});
  }
  if (maxLog <= minLog) maxLog = minLog + 1;
  if (maxBw <= 0) maxBw = 1;
  const double step = niceStep(maxBw, 5);
  const double yMax = std::ceil(maxBw / step) * step;
  const double plotW = kWidth - kLeft - kRight, plotH = kHeight - kTop - kBottom;
  auto x = [&](double bytes) { return kLeft + (std::log2(bytes) - minLog) / (maxLog - minLog) * plotW; };
  auto y = [&](double bw) { return kTop + plotH - bw / yMax * plotH; };

  std::ostringstream os;
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << kHeight
     << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
     << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
     << "<text x=\"" << kWidth / 2 << "\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">hetccl-perf " << run.collective
     << " (" << run.nranks << " ranks, " << run.typeName << ")</text>\n";
  for (double v = 0; v <= yMax + step / 2; v += step) {  // horizontal grid and y labels
    os << "<line x1=\"" << kLeft << "\" x2=\"" << kLeft + plotW << "\" y1=\"" << y(v) << "\" y2=\"" << y(v)
       << "\" stroke=\"#ddd\"/>\n<text x=\"" << kLeft - 6 << "\" y=\"" << y(v) + 4 << "\" text-anchor=\"end\">" << v
       << "</text>\n";
  }
  const int labelEvery = std::max(1, static_cast<int>(std::ceil((maxLog - minLog) / 12)));
  for (int l = static_cast<int>(std::ceil(minLog)); l <= static_cast<int>(maxLog); ++l) {  // powers of two
    const double bytes = std::ldexp(1.0, l);
    os << "<line x1=\"" << x(bytes) << "\" x2=\"" << x(bytes) << "\" y1=\"" << kTop << "\" y2=\"" << kTop + plotH
       << "\" stroke=\"#eee\"/>\n";
    if ((l - static_cast<int>(std::ceil(minLog))) % labelEvery == 0)
      os << "<text x=\"" << x(bytes) << "\" y=\"" << kTop + plotH + 18 << "\" text-anchor=\"middle\">"
         << sizeLabel(bytes) << "</text>\n";
  }
  os << "<rect x=\"" << kLeft << "\" y=\"" << kTop << "\" width=\"" << plotW << "\" height=\"" << plotH
     << "\" fill=\"none\" stroke=\"black\"/>\n"
     << "<text x=\"" << kLeft + plotW / 2 << "\" y=\"" << kHeight - 15 << "\" text-anchor=\"middle\">size (bytes, log2)</text>\n"
     << "<text transform=\"translate(18," << kTop + plotH / 2 << ") rotate(-90)\" text-anchor=\"middle\">busbw (GB/s)</text>\n";
  struct Series {
    const char* label;
    const char* color;
    bool inPlace;
  };
  int legend = 0;
  for (const Series& series : {Series{"out-of-place", "#1f77b4", false}, Series{"in-place", "#ff7f0e", true}}) {
    std::ostringstream points;
    for (const auto& s : run.sizes) {
      const PlaceResult& p = series.inPlace ? s.inPlace : s.outOfPlace;
      if (p.ran && s.bytes > 0) points << x(static_cast<double>(s.bytes)) << "," << y(p.busBw) << " ";
    }
    if (points.str().empty()) continue;
    os << "<polyline fill=\"none\" stroke=\"" << series.color << "\" stroke-width=\"2\" points=\"" << points.str()
       << "\"/>\n";
    const double ly = kTop + 15 + 18 * legend++;
    os << "<line x1=\"" << kLeft + 10 << "\" x2=\"" << kLeft + 35 << "\" y1=\"" << ly << "\" y2=\"" << ly
       << "\" stroke=\"" << series.color << "\" stroke-width=\"2\"/>\n<text x=\"" << kLeft + 40 << "\" y=\"" << ly + 4
       << "\">" << series.label << "</text>\n";
  }
  os << "</svg>\n";
  return os.str();
}

}  // namespace hetccl::perf
