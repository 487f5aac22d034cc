! fft2d_transpose: a small spectral solver in Fortran 90 that calls MPI_ALLTOALLV from Fortran,
! as real transpose-based 2-D FFT codes do. Not written for commsched: it never links it.
!
! NF complex fields of N1 x N2 points are distributed by rows, unevenly (rank r holds a share of
! rows proportional to r + 1). Each time step transforms every field to spectral space (DFT along
! each local row, a transpose by MPI_ALLTOALLV to an uneven column distribution, proportional to
! P - r, then DFT along each local column), applies a diffusion filter there, and transforms back
! (inverse DFTs around the reverse transpose). All fields are transformed one after the other, so
! each transpose pattern repeats NF times in a row, then the other one does.
!
! Rank 0 runs the same steps serially on the whole grid; the program prints the largest
! difference from that reference, a checksum of the final fields (16 digits: a run with
! commsched preloaded must print the same one as a native run), and "fft2d ok" when the
! difference is below 1e-9.
!
!   mpirun -np 4 fft2d_transpose [steps] [fields] [n1] [n2]
program fft2d_transpose
  use mpi
  implicit none
  integer, parameter :: dp = kind(1.0d0)
  integer :: steps, nf, n1, n2
  integer :: ierr, rank, nprocs, p, f, s, i, c
  integer, allocatable :: rstart(:), nrows(:), cstart(:), ncols(:)
  integer, allocatable :: fwd_scount(:), fwd_sdispl(:), fwd_rcount(:), fwd_rdispl(:)
  integer, allocatable :: gcount(:), gdispl(:)
  complex(dp), allocatable :: a(:, :, :), b(:, :), sbuf(:), rbuf(:), held(:, :)
  complex(dp), allocatable :: w1(:, :), w2(:, :), full(:, :, :), ref(:, :, :), tmp(:, :)
  real(dp), allocatable :: filt(:, :)
  real(dp) :: err, maxerr, checksum, pi, t_start, t_trans, t_mine(2), t_max(2)
  character(len=32) :: arg

  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
  steps = 3; nf = 4; n1 = 50; n2 = 36
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg); read (arg, *) steps
  end if
  if (command_argument_count() >= 2) then
    call get_command_argument(2, arg); read (arg, *) nf
  end if
  if (command_argument_count() >= 3) then
    call get_command_argument(3, arg); read (arg, *) n1
  end if
  if (command_argument_count() >= 4) then
    call get_command_argument(4, arg); read (arg, *) n2
  end if
  pi = 4.0_dp * atan(1.0_dp)

  ! Uneven block distributions: rows weighted r + 1, columns weighted P - r.
  allocate (rstart(0:nprocs - 1), nrows(0:nprocs - 1), cstart(0:nprocs - 1), ncols(0:nprocs - 1))
  call partition(n1, nprocs, .true., rstart, nrows)
  call partition(n2, nprocs, .false., cstart, ncols)

  ! Forward transpose counts (rows -> columns); the inverse transpose swaps send and receive.
  allocate (fwd_scount(0:nprocs - 1), fwd_sdispl(0:nprocs - 1))
  allocate (fwd_rcount(0:nprocs - 1), fwd_rdispl(0:nprocs - 1))
  do p = 0, nprocs - 1
    fwd_scount(p) = nrows(rank) * ncols(p)
    fwd_rcount(p) = nrows(p) * ncols(rank)
  end do
  fwd_sdispl(0) = 0; fwd_rdispl(0) = 0
  do p = 1, nprocs - 1
    fwd_sdispl(p) = fwd_sdispl(p - 1) + fwd_scount(p - 1)
    fwd_rdispl(p) = fwd_rdispl(p - 1) + fwd_rcount(p - 1)
  end do

  allocate (a(n2, max(nrows(rank), 1), nf), b(n1, max(ncols(rank), 1)))
  allocate (sbuf(max(1, nrows(rank) * n2)), rbuf(max(1, n1 * ncols(rank))))
  allocate (w1(0:n1 - 1, 0:n1 - 1), w2(0:n2 - 1, 0:n2 - 1), filt(n1, n2))
  call twiddles(n1, w1)
  call twiddles(n2, w2)
  do c = 1, n2
    do i = 1, n1
      filt(i, c) = exp(-0.05_dp * real(wavenumber(i - 1, n1)**2 + wavenumber(c - 1, n2)**2, dp))
    end do
  end do

  ! Initial fields from global indices, so rank 0 can build the same whole grid.
  do f = 1, nf
    do i = 1, nrows(rank)
      do c = 1, n2
        a(c, i, f) = initial(rstart(rank) + i, c, f)
      end do
    end do
  end do

  t_trans = 0
  t_start = MPI_WTIME()
  do s = 1, steps
    do f = 1, nf   ! forward: rows -> spectrum by columns, filter in place
      do i = 1, nrows(rank)
        a(:, i, f) = dft(a(:, i, f), w2, n2, .false.)
      end do
      call transpose_fwd(a(:, :, f), b)
      do c = 1, ncols(rank)
        b(:, c) = dft(b(:, c), w1, n1, .false.) * filt(:, cstart(rank) + c)
      end do
      ! Inverse along the columns now; the transpose back waits for the next loop, so each
      ! transpose pattern runs NF times in a row.
      do c = 1, ncols(rank)
        b(:, c) = dft(b(:, c), w1, n1, .true.)
      end do
      call pack_cols(b, f)
    end do
    do f = 1, nf   ! back: columns -> rows, finish the inverse along rows
      call transpose_bwd(f)
      do i = 1, nrows(rank)
        a(:, i, f) = dft(a(:, i, f), w2, n2, .true.) / real(n1 * n2, dp)
      end do
    end do
  end do

  ! The time steps and the transposes in them, on the slowest rank (the program's own timing,
  ! not compared between runs).
  t_mine = [MPI_WTIME() - t_start, t_trans]
  call MPI_REDUCE(t_mine, t_max, 2, MPI_DOUBLE_PRECISION, MPI_MAX, 0, MPI_COMM_WORLD, ierr)

  ! Gather the final fields on rank 0 (rows are contiguous in a(:, i, f)).
  allocate (gcount(0:nprocs - 1), gdispl(0:nprocs - 1), full(n2, n1, nf), tmp(n2, n1))
  gcount = nrows * n2
  gdispl = rstart * n2
  do f = 1, nf
    call MPI_GATHERV(a(:, :, f), nrows(rank) * n2, MPI_DOUBLE_COMPLEX, tmp, gcount, gdispl, &
                     MPI_DOUBLE_COMPLEX, 0, MPI_COMM_WORLD, ierr)
    if (rank == 0) full(:, :, f) = tmp
  end do

  if (rank == 0) then
    allocate (ref(n2, n1, nf))
    do f = 1, nf
      do i = 1, n1
        do c = 1, n2
          ref(c, i, f) = initial(i, c, f)
        end do
      end do
      do s = 1, steps
        call serial_step(ref(:, :, f))
      end do
    end do
    maxerr = maxval(abs(full - ref))
    checksum = 0
    do f = 1, nf
      do i = 1, n1
        do c = 1, n2
          checksum = checksum + real(f * 7 + i * 3 + c, dp) * abs(full(c, i, f))
        end do
      end do
    end do
    write (*, '(a,i0,a,i0,a,i0,a,i0,a,i0)') 'fft2d: ranks=', nprocs, ' grid=', n1, 'x', n2, &
      ' fields=', nf, ' steps=', steps
    write (*, '(a,es10.3)') 'fft2d: max difference from serial = ', maxerr
    write (*, '(a,es24.16)') 'fft2d: checksum = ', checksum
    write (*, '(a,f0.4,a,f0.4)') 'time: steps_s=', t_max(1), ' transposes_s=', t_max(2)
    err = maxerr
    if (err < 1.0e-9_dp) then
      write (*, '(a)') 'fft2d ok'
    else
      write (*, '(a)') 'fft2d FAILED'
    end if
  end if
  call MPI_BCAST(maxerr, 1, MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, ierr)
  call MPI_FINALIZE(ierr)
  if (maxerr >= 1.0e-9_dp) stop 1

contains

  ! Contiguous blocks; block sizes weighted r + 1 (rising) or nprocs - r (falling).
  subroutine partition(n, np, rising, start, cnt)
    integer, intent(in) :: n, np
    logical, intent(in) :: rising
    integer, intent(out) :: start(0:np - 1), cnt(0:np - 1)
    integer :: r, total, acc, nxt
    total = np * (np + 1) / 2
    acc = 0
    do r = 0, np - 1
      start(r) = (n * acc) / total
      if (rising) then
        acc = acc + r + 1
      else
        acc = acc + np - r
      end if
      nxt = (n * acc) / total
      cnt(r) = nxt - start(r)
    end do
  end subroutine

  subroutine twiddles(n, w)
    integer, intent(in) :: n
    complex(dp), intent(out) :: w(0:n - 1, 0:n - 1)
    integer :: j, m
    do m = 0, n - 1
      do j = 0, n - 1
        w(j, m) = exp(cmplx(0.0_dp, -2.0_dp * pi * real(mod(j * m, n), dp) / real(n, dp), dp))
      end do
    end do
  end subroutine

  function dft(x, w, n, inverse) result(y)
    integer, intent(in) :: n
    complex(dp), intent(in) :: x(n), w(0:n - 1, 0:n - 1)
    logical, intent(in) :: inverse
    complex(dp) :: y(n)
    integer :: m
    do m = 0, n - 1
      if (inverse) then
        y(m + 1) = sum(conjg(w(:, m)) * x)
      else
        y(m + 1) = sum(w(:, m) * x)
      end if
    end do
  end function

  integer function wavenumber(j, n)
    integer, intent(in) :: j, n
    if (j <= n / 2) then
      wavenumber = j
    else
      wavenumber = j - n
    end if
  end function

  complex(dp) function initial(i, c, f)
    integer, intent(in) :: i, c, f
    initial = cmplx(sin(0.3_dp * i * f) + cos(0.17_dp * c * c), &
                    0.01_dp * mod(i * 31 + c * 17 + f * 5, 23), dp)
  end function

  ! Rows -> columns: block for rank p holds my rows x p's columns, column index fastest.
  subroutine transpose_fwd(src, dst)
    complex(dp), intent(in) :: src(:, :)
    complex(dp), intent(out) :: dst(:, :)
    integer :: q, ii, cc, kk
    real(dp) :: t0
    kk = 0
    do q = 0, nprocs - 1
      do ii = 1, nrows(rank)
        do cc = 1, ncols(q)
          kk = kk + 1
          sbuf(kk) = src(cstart(q) + cc, ii)
        end do
      end do
    end do
    t0 = MPI_WTIME()
    call MPI_ALLTOALLV(sbuf, fwd_scount, fwd_sdispl, MPI_DOUBLE_COMPLEX, rbuf, fwd_rcount, &
                       fwd_rdispl, MPI_DOUBLE_COMPLEX, MPI_COMM_WORLD, ierr)
    t_trans = t_trans + (MPI_WTIME() - t0)
    kk = 0
    do q = 0, nprocs - 1
      do ii = 1, nrows(q)
        do cc = 1, ncols(rank)
          kk = kk + 1
          dst(rstart(q) + ii, cc) = rbuf(kk)
        end do
      end do
    end do
  end subroutine

  ! Keeps field f's column-distributed data until its transpose back (in the receive layout
  ! of the forward transpose, which is the send layout of the backward one).
  subroutine pack_cols(src, fld)
    complex(dp), intent(in) :: src(:, :)
    integer, intent(in) :: fld
    integer :: q, ii, cc, kk
    if (.not. allocated(held)) allocate (held(max(1, n1 * ncols(rank)), nf))
    kk = 0
    do q = 0, nprocs - 1
      do ii = 1, nrows(q)
        do cc = 1, ncols(rank)
          kk = kk + 1
          held(kk, fld) = src(rstart(q) + ii, cc)
        end do
      end do
    end do
  end subroutine

  ! Columns -> rows: the forward transpose's counts with send and receive swapped.
  subroutine transpose_bwd(fld)
    integer, intent(in) :: fld
    integer :: q, ii, cc, kk
    real(dp) :: t0
    t0 = MPI_WTIME()
    call MPI_ALLTOALLV(held(:, fld), fwd_rcount, fwd_rdispl, MPI_DOUBLE_COMPLEX, sbuf, &
                       fwd_scount, fwd_sdispl, MPI_DOUBLE_COMPLEX, MPI_COMM_WORLD, ierr)
    t_trans = t_trans + (MPI_WTIME() - t0)
    kk = 0
    do q = 0, nprocs - 1
      do ii = 1, nrows(rank)
        do cc = 1, ncols(q)
          kk = kk + 1
          a(cstart(q) + cc, ii, fld) = sbuf(kk)
        end do
      end do
    end do
  end subroutine

  ! The same step on the whole grid, one process: the reference.
  subroutine serial_step(g)
    complex(dp), intent(inout) :: g(n2, n1)
    complex(dp) :: col(n1)
    integer :: ii, cc
    do ii = 1, n1
      g(:, ii) = dft(g(:, ii), w2, n2, .false.)
    end do
    do cc = 1, n2
      col = g(cc, :)
      col = dft(col, w1, n1, .false.) * filt(:, cc)
      g(cc, :) = dft(col, w1, n1, .true.)
    end do
    do ii = 1, n1
      g(:, ii) = dft(g(:, ii), w2, n2, .true.) / real(n1 * n2, dp)
    end do
  end subroutine

end program fft2d_transpose
