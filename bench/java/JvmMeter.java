// What the bench's Java drivers measure about their own JVM (CacheBenchDriver, ScaleBenchDriver,
// ScaleLockDriver; compiled with each of them).
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

final class JvmMeter {
  private JvmMeter() {}

  /** This JVM's CPU time (all threads), µs. */
  static long cpuUs() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime() / 1000;
  }

  /** Used heap after collections (several passes, as one System.gc() may leave garbage behind). */
  static long usedHeap() throws InterruptedException {
    Runtime rt = Runtime.getRuntime();
    long used = Long.MAX_VALUE;
    for (int i = 0; i < 4; i++) {
      System.gc();
      Thread.sleep(20);
      used = Math.min(used, rt.totalMemory() - rt.freeMemory());
    }
    return used;
  }

  /** The process's resident set (VmRSS), bytes; 0 where /proc/self/status does not say. */
  static long rss() throws Exception {
    for (String line : Files.readAllLines(Path.of("/proc/self/status"), StandardCharsets.UTF_8)) {
      if (line.startsWith("VmRSS:")) return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
    }
    return 0;
  }
}
